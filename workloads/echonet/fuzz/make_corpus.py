"""Writes the `datagram` seed corpus: the requests and replies of the conformance suite
(echonet_spec.py: every request service to both objects, the SPEC's 36-byte Get and its reply)
and its hostile datagrams (test_hostile.py). Run again after changing those:
    .venv/bin/python workloads/echonet/fuzz/make_corpus.py
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "conformance"))

import echonet_spec as S  # noqa: E402
from test_hostile import HOSTILE  # noqa: E402

from msgbench.fuzz import corpus  # noqa: E402

seeds = {f"hostile-{name}": data for name, (data, _) in HOSTILE.items()}
seeds["spec-get-36"] = S.SPEC_GET_36
seeds["spec-reply-94"] = S.SPEC_REPLY_94_127_0_0_1
for obj_name, obj in [("profile", S.NODE_PROFILE), ("aircon", S.AIRCON)]:
    epcs = sorted(S.objects("127.0.0.1")[obj])
    seeds[f"get-all-{obj_name}"] = S.get_request(1, obj, epcs)
    seeds[f"get-unknown-{obj_name}"] = S.get_request(2, obj, [0x00, 0xFF])
    seeds[f"inf-req-{obj_name}"] = S.frame(3, S.CONTROLLER, obj, S.INF_REQ, [(0x80, b"")])
for epc, values in sorted(S.SETTABLE.items()):
    v = bytes([min(values)])
    seeds[f"setc-{epc:02x}"] = S.frame(4, S.CONTROLLER, S.AIRCON, S.SETC, [(epc, v)])
    seeds[f"seti-{epc:02x}"] = S.frame(5, S.CONTROLLER, S.AIRCON, S.SETI, [(epc, v)])
seeds["setc-refused"] = S.frame(6, S.CONTROLLER, S.AIRCON, S.SETC, [(0x80, b"\x99\x98")])
seeds["setget"] = S.setget_frame(7, S.CONTROLLER, S.AIRCON, S.SETGET, [(0x80, b"\x30")],
                                 [(0x80, b""), (0xB0, b"")])  # fmt: skip
seeds["infc"] = S.frame(8, S.CONTROLLER, S.NODE_PROFILE, S.INFC, [(0xD5, b"\x01\x01\x30\x01")])
seeds["to-unknown-object"] = S.get_request(9, 0x029001, [0x80])
seeds["to-instance-0"] = S.get_request(10, 0x013000, [0x80])
profile = S.node_profile("127.0.0.1")
epcs = S.NODE_PROFILE_EPCS
seeds["get-res-from-node"] = S.get_reply(S.SPEC_GET_36, S.NODE_PROFILE, profile, epcs)
corpus.write_target("echonet", "datagram", seeds)
