"""ROS 2 node names and namespaces: the rules rcl applies (rmw_validate_node_name, _namespace).

``wbm launch`` checks them before starting anything: a node started with an invalid name or
namespace fails inside rcl before it can say which launch argument made it (the tests compare
these rules with rclpy's validation).
"""

from __future__ import annotations

import re

#: Longest node name rcl accepts [characters].
MAX_NODE_NAME_LENGTH = 255

#: Longest namespace rcl accepts [characters], the leading '/' included.
MAX_NAMESPACE_LENGTH = 245

_TOKEN = re.compile(r"[A-Za-z0-9_]+\Z")


def node_name_problem(name: str) -> str | None:
    """Why ``name`` is not a valid node name, or None when it is."""
    if not name:
        return "expected a node name, got an empty one"
    if not _TOKEN.match(name):
        return f"expected a node name of letters, digits and '_', got {name!r}"
    if name[0].isdigit():
        return f"expected a node name that does not start with a digit, got {name!r}"
    if len(name) > MAX_NODE_NAME_LENGTH:
        return f"expected a node name of at most {MAX_NODE_NAME_LENGTH} characters"
    return None


def namespace_problem(namespace: str) -> str | None:
    """Why ``namespace`` (fully qualified, e.g. ``/robot``) is not valid, or None when it is."""
    if not namespace:
        return "expected a namespace, got an empty one"
    if not namespace.startswith("/"):
        return f"expected a namespace starting with '/', got {namespace!r}"
    if namespace == "/":
        return None
    if len(namespace) > MAX_NAMESPACE_LENGTH:
        return f"expected a namespace of at most {MAX_NAMESPACE_LENGTH} characters"
    if namespace.endswith("/"):
        return f"expected a namespace that does not end with '/', got {namespace!r}"
    for token in namespace[1:].split("/"):
        if not token:
            return f"expected a namespace without '//', got {namespace!r}"
        if not _TOKEN.match(token):
            return f"expected a namespace of letters, digits, '_' and '/', got {namespace!r}"
        if token[0].isdigit():
            return f"expected a namespace whose parts do not start with a digit, got {namespace!r}"
    return None


__all__ = [
    "MAX_NAMESPACE_LENGTH",
    "MAX_NODE_NAME_LENGTH",
    "namespace_problem",
    "node_name_problem",
]
