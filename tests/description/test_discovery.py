"""wbm's default Fast DDS participant profile (wbm_description.ros.discovery).

The choice of the profile is checked on environments given as dicts (a profile or another
middleware already chosen wins). The file is read as Fast DDS reads it: a default participant
profile whose start-up announcements span more than Fast DDS's periodic announcement (3 s), so
a node starting a few seconds after another still hears one of them. What it is for, the loop of
a launch closing soon after the controller is ready, is checked on the real bringup
(tests/bringup/test_bringup_e2e.py: within 1.5 s, where Fast DDS's default announcements took
2.3-3.0 s in 9 of 12 launches; a late node in a pair of processes alone heard an early one
within 0.2-0.6 s with and without the profile, so a pair does not show it).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from wbm_description.ros.discovery import PROFILE, use_default_profile

NS = {"f": "http://www.eprosima.com"}
FAST_DDS_PERIODIC_ANNOUNCEMENT = 3.0  # [s], Fast DDS's leaseDuration_announcementperiod


def test_the_profile_is_chosen_only_where_nothing_else_is():
    env: dict[str, str] = {}
    assert use_default_profile(env) == PROFILE
    assert env == {"FASTDDS_DEFAULT_PROFILES_FILE": str(PROFILE)}
    env = {"RMW_IMPLEMENTATION": "rmw_fastrtps_cpp"}
    assert use_default_profile(env) == PROFILE
    for chosen in (
        {"FASTDDS_DEFAULT_PROFILES_FILE": "/mine.xml"},
        {"FASTRTPS_DEFAULT_PROFILES_FILE": "/mine.xml"},
        {"RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp"},
    ):
        env = dict(chosen)
        assert use_default_profile(env) is None
        assert env == chosen


def test_the_profile_is_a_default_participant_announcing_past_the_periodic_announcement():
    root = ET.parse(PROFILE).getroot()
    participants = root.findall("f:profiles/f:participant", NS)
    assert len(participants) == 1
    assert participants[0].get("is_default_profile") == "true"
    initial = participants[0].find(
        "f:rtps/f:builtin/f:discovery_config/f:initialAnnouncements", NS
    )
    count = int(initial.find("f:count", NS).text)
    period = int(initial.find("f:period/f:sec", NS).text) + 1e-9 * int(
        initial.find("f:period/f:nanosec", NS).text
    )
    assert period <= 0.1
    assert count * period > FAST_DDS_PERIODIC_ANNOUNCEMENT
