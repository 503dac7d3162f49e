"""The viewer's page as a user and a test see it: its controls, its text, its scene.

Controls are found in the DOM by their visible label and used with real mouse and keyboard
events. What the page holds is read through the hooks viser's client exposes for its own
end-to-end tests (``window.__viserSceneTree``: the client's scene tree, the nodes it mounts;
``window.__viserMutable``: its three.js scene and camera, ``nodeRefFromName``, ``nodePoseData``,
and ``sendMessage``, the function through which every control of the page, the transform-control
gizmo included, sends its messages to the server; ``window.__viserTestpoints.uplots``: the uPlot
charts with the data they draw; ``window.__viserPointer``: the scene pointer state).
"""

from __future__ import annotations

import base64
import io
import json
import re
import time

import numpy as np
from PIL import Image

from tests.viewer.viewer_browser import HeadlessBrowser
from tests.viewer.viewer_helpers import spin_until

NODE = "wbm_bringup.ros.viewer_node"
#: Longest wait for the viewer to start [s]: loading iCub's meshes takes 5 s on an idle core,
#: many times that under a load average of 8.
START_TIMEOUT = 180.0


def start_viewer(start_node, rclpy_node, *params: str):
    """Start the viewer node; returns (process, url, camera line)."""
    args = []
    for param in params:
        args += ["-p", param]
    viewer = start_node(NODE, args)
    started = spin_until(
        rclpy_node,
        lambda: "wbm_viewer: camera" in viewer.stdout() or viewer.process.poll() is not None,
        START_TIMEOUT,
    )
    assert started and viewer.process.poll() is None, viewer.stderr()
    out = viewer.stdout()
    url = re.search(r"wbm_viewer: open (\S+)", out).group(1)
    camera = re.search(r"wbm_viewer: camera (.*)", out).group(1)
    assert url.startswith("http://127.0.0.1:")
    return viewer, url, camera


def wait_until_built(browser: HeadlessBrowser, timeout: float = 240.0) -> None:
    """Wait until the page holds the scene and panel the viewer builds, and shows the scene.

    The client draws its canvas nearly transparent (opacity 0.05) until its environment map is
    loaded, then fades it in (HDRJPGEnvironment.tsx): in software WebGL under load that takes
    tens of seconds, and a screenshot before shows a washed-out scene.
    """
    browser.wait_for(
        """(() => {
            const tree = window.__viserSceneTree, mutable = window.__viserMutable;
            if (!tree || !mutable || !mutable.canvas) return false;
            const nodes = tree.getState();
            return '/targets/com' in nodes && '/robot' in nodes
                && document.body.innerText.includes('tracking errors')
                && mutable.canvas.style.opacity === '1';
        })()""",
        timeout=timeout,
        what="the page to receive the viewer's scene and panel and fade its canvas in",
    )


def page_text(browser: HeadlessBrowser) -> str:
    """The page's visible text (``innerText`` of the body)."""
    return browser.evaluate("document.body.innerText")


_FIND = {
    # The last button whose text is the label.
    "button": """[...document.querySelectorAll('button')]
        .filter(e => e.textContent.trim() === LABEL).pop()""",
    # The input that the label is for (its htmlFor).
    "input": """(() => {
        const label = [...document.querySelectorAll('label')]
            .filter(e => e.textContent.trim() === LABEL).pop();
        return label && label.htmlFor ? document.getElementById(label.htmlFor) : null;
        })()""",
    # The text box next to a slider with that label (the slider's number input).
    "slider_input": """(() => {
        const label = [...document.querySelectorAll('label')]
            .filter(e => e.textContent.trim() === LABEL).pop();
        const slider = label && label.htmlFor ? document.getElementById(label.htmlFor) : null;
        return slider ? slider.parentElement.querySelector('input:not([type=hidden])') : null;
        })()""",
    # The innermost element whose own first text is the label (a folder's title).
    "text": """[...document.querySelectorAll('div')]
        .filter(e => e.firstChild && e.firstChild.nodeType === 3
            && e.firstChild.textContent.trim() === LABEL).pop()""",
}


def _element(kind: str, label: str) -> str:
    return _FIND[kind].replace("LABEL", json.dumps(label))


def element_center(
    browser: HeadlessBrowser, label: str, kind: str, timeout: float = 60.0
) -> tuple[float, float]:
    """Centre (page px) of a control once the page shows it, scrolled into view.

    ``kind``: "button", "input" (a text or number input by its label), "slider_input" (the
    number box of a slider by its label) or "text" (a folder title).
    """
    script = f"""(() => {{
        const element = {_element(kind, label)};
        if (!element) return null;
        element.scrollIntoView({{block: 'center'}});
        const r = element.getBoundingClientRect();
        if (r.width === 0 || r.height === 0) return null;
        return [r.x + r.width / 2, r.y + r.height / 2];
        }})()"""
    browser.wait_for(script, timeout=timeout, what=f"{kind} '{label}' on the page")
    time.sleep(0.3)  # let the scroll settle, then measure again
    return tuple(browser.wait_for(script, timeout=timeout, what=f"{kind} '{label}'"))


def click_button(browser: HeadlessBrowser, label: str) -> None:
    """Click the button with that text (with the mouse)."""
    browser.click(*element_center(browser, label, "button"))


def open_folder(browser: HeadlessBrowser, title: str, first_control: str) -> None:
    """Open a folder of the panel (a click on its title when it is closed) until its first
    control (a slider) shows."""
    shown = f"""(() => {{
        const element = {_element("slider_input", first_control)};
        return element !== null && element !== undefined
            && element.getBoundingClientRect().height > 0;
        }})()"""
    if not browser.evaluate(shown):
        browser.click(*element_center(browser, title, "text"))
    element_center(browser, first_control, "slider_input")


def enter_number(browser: HeadlessBrowser, label: str, value: float, kind: str = "input") -> None:
    """Type a number into a labelled input (or a slider's box) and leave it with Tab."""
    box = element_center(browser, label, kind)
    browser.click(*box)
    focused = browser.evaluate(
        f"""(() => {{
        const input = {_element(kind, label)};
        input.focus(); input.select();
        return document.activeElement === input;
        }})()""",
        retry=False,
    )
    assert focused, label
    browser.type_text(repr(float(value)))
    browser.key("Tab", "Tab", 9)


def number_in(label: str, kind: str = "input") -> str:
    """A JavaScript expression: the number shown in a labelled input (or a slider's box)."""
    return f"Number(({_element(kind, label)}).value)"


def scene_node(browser: HeadlessBrowser, name: str) -> dict | None:
    """A node of the client's scene tree: its message type, owner, a few props, its pose.

    The pose is the one the client applies to the node (``nodePoseData``, in its parent),
    ``world`` the position of the mounted three.js object in the scene root's frame (the
    world, z up) [m]; None when the node is not there.
    """
    return browser.evaluate(
        f"""(() => {{
        const node = window.__viserSceneTree.getState()[{json.dumps(name)}];
        if (!node) return null;
        const pose = window.__viserMutable.nodePoseData[{json.dumps(name)}] || {{}};
        const object = window.__viserMutable.nodeRefFromName[{json.dumps(name)}];
        const root = window.__viserMutable.nodeRefFromName[''];
        let world = null;
        if (object && root) {{  // relative to the scene root (viser turns z-up to three's y-up)
            object.updateWorldMatrix(true, false);
            const e = root.matrixWorld.clone().invert().multiply(object.matrixWorld).elements;
            world = [e[12], e[13], e[14]];
        }}
        const props = {{}};
        for (const [key, value] of Object.entries(node.message.props || {{}})) {{
            if (ArrayBuffer.isView(value)) props[key] = Array.from(value);
            else if (typeof value !== 'object' || value === null || Array.isArray(value))
                props[key] = value;
        }}
        return {{
            type: node.message.type, owner: node.message.owner ?? '', props,
            position: pose.position ?? null, wxyz: pose.wxyz ?? null,
            mounted: object !== undefined && object !== null, world,
            visible: node.effectiveVisibility ?? null,
        }};
        }})()"""
    )


def scene_names(browser: HeadlessBrowser, prefix: str) -> list[str]:
    """Names of the client's scene nodes under a path."""
    return browser.evaluate(
        f"""Object.keys(window.__viserSceneTree.getState())
            .filter(n => n.startsWith({json.dumps(prefix)})).sort()"""
    )


def send_client_message(browser: HeadlessBrowser, message: dict) -> None:
    """Send a message to the server the way the page's own controls do (``sendMessage``)."""
    browser.evaluate(
        f"window.__viserMutable.sendMessage({json.dumps(message)}), true", retry=False
    )


def gui_image(browser: HeadlessBrowser, width: int, height: int) -> np.ndarray:
    """The pixels of the panel's image of that size, as the page decoded it: (h, w, 3) uint8."""
    data_url = browser.wait_for(
        f"""(() => {{
        const image = [...document.querySelectorAll('img')].find(
            i => i.naturalWidth === {width} && i.naturalHeight === {height} && i.complete);
        if (!image) return null;
        const canvas = document.createElement('canvas');
        canvas.width = {width}; canvas.height = {height};
        canvas.getContext('2d').drawImage(image, 0, 0);
        return canvas.toDataURL('image/png');
        }})()""",
        what=f"a {width} x {height} image in the panel",
    )
    png = base64.b64decode(data_url.split(",", 1)[1])
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def uplot_charts(browser: HeadlessBrowser) -> list[dict]:
    """Every uPlot chart of the panel: its title, series labels and the data it draws."""
    return browser.evaluate(
        """Object.values((window.__viserTestpoints || {}).uplots || {}).map(({chart}) => ({
            title: (chart.root.querySelector('.u-title') || {}).textContent || '',
            labels: chart.series.map(s => s.label),
            data: chart.data.map(column => Array.from(column)),
        }))"""
    )
