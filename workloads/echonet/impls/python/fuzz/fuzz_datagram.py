"""Atheris target `datagram` (workloads/echonet/fuzz/README.md): an input is one UDP datagram.

The node's path of node_main.serve without its socket: frame.decode of the datagram (Malformed
and Format2 are its counted drops), then Responder.answer by a fresh node's objects (a Set
changes them). The controller's path on the same bytes: the same frame.decode, then what it
does with a reply: controller.instance_list of each EDT (discovery) and controller_main's
reply_json, printed as JSON.

Checked per input: a datagram that decodes encodes back to the same bytes (frame.encode);
every answer is at most one UDP payload and itself decodes, with the request's TID, the
request's SEOJ as DEOJ, an object the request's DEOJ names as SEOJ, an ESV that answers the
request's, and the request's EPCs in the request's order (both parts of a SetGet).

Run: .venv/bin/python workloads/echonet/impls/python/fuzz/fuzz_datagram.py [libFuzzer flags]
[corpus dirs | files to replay].
"""

import json
import os
import sys

import atheris

from msgbench.fuzz import atheris_fix  # noqa: F401  (before instrumenting: see its docstring)

# This implementation's folder only: the other workloads' Python programs use the same module
# names (frame, ...), and the script's own folder (fuzz/) is no package.
IMPL_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, IMPL_DIR)

with atheris.instrument_imports(
    include=["frame", "propmap", "objects", "responder", "controller", "controller_main"]
):
    import controller
    import controller_main
    import frame
    import objects
    from frame import Format2, Malformed
    from responder import Responder

NODE_ADDR = bytes((127, 0, 50, 1))


def epcs(properties):
    return [epc for epc, _ in properties]


def check_answer(request, reply_bytes, eojs):
    if len(reply_bytes) > frame.MAX_PAYLOAD:
        raise AssertionError(f"a reply of {len(reply_bytes)} bytes")
    reply = frame.decode(reply_bytes)  # Malformed here is a finding: the node sent it
    if reply.tid != request.tid or reply.deoj != request.seoj:
        raise AssertionError(f"reply {reply!r} to {request!r}: TID or DEOJ")
    if reply.seoj not in eojs:
        raise AssertionError(f"reply from {reply.seoj.hex()}, not an object DEOJ names")
    if reply.esv not in frame.REPLY_ESVS[request.esv]:
        raise AssertionError(f"ESV {reply.esv:02x} answers {request.esv:02x}")
    if epcs(reply.properties) != epcs(request.properties):
        raise AssertionError(f"reply {reply!r} to {request!r}: EPCs")
    if (reply.get_properties is None) != (request.get_properties is None) or (
        request.get_properties is not None
        and epcs(reply.get_properties) != epcs(request.get_properties)
    ):
        raise AssertionError(f"reply {reply!r} to {request!r}: get part")


def node(data):
    """node_main.serve's work for one datagram."""
    try:
        request = frame.decode(data)
    except (Malformed, Format2):
        return
    again = frame.encode(
        request.tid, request.seoj, request.deoj, request.esv, request.properties,
        request.get_properties,
    )  # fmt: skip
    if again != data:
        raise AssertionError(f"{request!r} encodes to {again.hex()}")
    node_objects = objects.node_objects(NODE_ADDR)
    out = Responder(node_objects).answer(request)
    if out is None:
        return
    named = {
        obj.eoj
        for obj in node_objects
        if request.deoj in (obj.eoj, obj.eoj[:2] + bytes((frame.ALL_INSTANCES,)))
    }
    if not named:
        raise AssertionError(f"answered {request!r}, which names none of the node's objects")
    for reply_bytes in out:
        check_answer(request, reply_bytes, named)


def controller_side(data):
    """What the controller does with a datagram that passed its TID, ESV and source checks."""
    try:
        reply = frame.decode(data)
    except (Malformed, Format2):
        return
    for _, edt in reply.properties + (reply.get_properties or []):
        for eoj in controller.instance_list(edt):
            if len(eoj) != 3:
                raise AssertionError(f"instance list entry {eoj!r}")
    json.dumps(controller_main.reply_json("127.0.50.1", reply.tid, reply, 1, 0))


def TestOneInput(data: bytes):
    node(data)
    controller_side(data)


def main():
    if frame.__file__ != os.path.join(IMPL_DIR, "frame.py"):
        raise SystemExit(f"frame imported from {frame.__file__}, not {IMPL_DIR}")
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
