"""pychonet, the library behind Home Assistant's ECHONET Lite integration, as a foreign
controller: it finds a node and reads everything the node says it has, the way the integration
does (discovery, the instance list, each object's property maps, then each property).

Run as a program, so that it can run on a host of a topology (inside its network namespace):

    python third_party.py --bind ADDR --read HOST          # unicast discovery of HOST, read all
    python third_party.py --bind ADDR --discover N         # multicast discovery until N answered

It prints one JSON object on stdout:

    {"nodes": {"10.201.0.3": {"instances": ["013001"],
                              "objects": {"0ef001": {"maps": {"9f": ["80", ...], ...},
                                                     "values": {"80": "30", ...},
                                                     "esv": {"80": "72", ...}}, ...}}},
     "elapsed_s": 1.23}

Everything in it is what pychonet made of the node's replies: instances from its discovery
state, maps decoded by its own decoder (EPC_SUPER_FUNCTIONS, _009X), and values from its state
where it keeps them (device objects) or, for the node profile (whose replies it keeps only for
discovery), from the reply it received, decoded by its decodeEchonetMsg.

pychonet binds its socket to the address given (UDPServer.run(host, port)) and joins
224.0.23.0 on the interface of `local_ip`; pychonet sends every request to port 3610.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time

NODE_PROFILE = (0x0E, 0xF0, 0x01)
MAP_EPCS = (0x9D, 0x9E, 0x9F)


def eoj_hex(gc: int, cc: int, ci: int) -> str:
    return f"{gc:02x}{cc:02x}{ci:02x}"


async def run(bind: str, read: str | None, discover: int | None, timeout_s: float) -> dict:
    from pychonet.echonetapiclient import ECHONETAPIClient
    from pychonet.lib.const import GET
    from pychonet.lib.epc_functions import EPC_SUPER_FUNCTIONS
    from pychonet.lib.functions import decodeEchonetMsg
    from pychonet.lib.udpserver import UDPServer

    loop = asyncio.get_running_loop()
    server = UDPServer(local_ip=bind)
    server.run(bind, 3610, loop)
    api = ECHONETAPIClient(server)
    found: list[str] = []

    async def on_new_host(host: str) -> None:  # pychonet's hook for an unknown sender
        if host not in found:
            found.append(host)

    # message_timeout counts pychonet's 0.1 s polls for a reply.
    api.configure(
        message_timeout=max(1, round(timeout_s * 10)),
        logger=lambda *a, **k: None,
        discover_callback=on_new_host,
    )
    # The replies as pychonet decodes them: host -> SEOJ -> EPC -> (ESV, EDT); the last wins.
    heard: dict[str, dict[tuple, dict[int, tuple[int, bytes]]]] = {}

    async def capture(data: bytes, addr) -> None:
        try:
            msg = decodeEchonetMsg(data)
        except Exception:
            return
        seoj = (msg["SEOJGC"], msg["SEOJCC"], msg["SEOJCI"])
        per = heard.setdefault(addr[0], {}).setdefault(seoj, {})
        for opc in msg["OPC"]:
            per[opc["EPC"]] = (msg["ESV"], bytes(opc["EDT"]))

    server.subscribe(capture)
    start = time.perf_counter()
    try:
        if discover is not None:
            # Home Assistant's way: a multicast Get of 0xD6; every node that answers is an
            # unknown host to pychonet (the discover callback), found by address after.
            for _ in range(3):
                await api.discover()
                if len(found) >= discover:
                    break
            hosts = sorted(found)
        else:
            hosts = [read]
        nodes = {}
        for host in hosts:
            await api.discover(host)  # Get 0x8A, 0x8C, 0x83, 0xD6 of the node profile
            state = api.state.get(host, {}).get("instances", {})
            instances = [
                eoj_hex(gc, cc, ci)
                for gc, classes in state.items()
                for cc, insts in classes.items()
                for ci in insts
            ]
            node = {"instances": instances, "objects": {}}
            nodes[host] = node
            if discover is not None:
                continue
            for gc, cc, ci in [NODE_PROFILE] + [bytes.fromhex(e) for e in instances]:
                node["objects"][eoj_hex(gc, cc, ci)] = await read_object(
                    api, host, (gc, cc, ci), heard, GET, EPC_SUPER_FUNCTIONS
                )
    finally:
        server.close()
    return {"nodes": nodes, "elapsed_s": round(time.perf_counter() - start, 3)}


async def read_object(api, host, eoj, heard, GET, EPC_SUPER_FUNCTIONS) -> dict:
    """The object's maps (one Get of 9D, 9E, 9F, as pychonet's getAllPropertyMaps), then every
    EPC of its get map alone."""
    gc, cc, ci = eoj
    await api.getAllPropertyMaps(host, gc, cc, ci)
    replies = heard.get(host, {}).get(eoj, {})
    stored = api.state.get(host, {}).get("instances", {}).get(gc, {}).get(cc, {}).get(ci, {})
    maps = {}
    for epc in MAP_EPCS:
        if eoj != NODE_PROFILE and epc in stored:
            codes = stored[epc]  # pychonet decoded and kept it
        elif epc in replies:
            codes = EPC_SUPER_FUNCTIONS[epc](replies[epc][1])
        else:
            codes = None
        maps[f"{epc:02x}"] = None if codes is None else [f"{c:02x}" for c in codes]
    values, esvs = {}, {}
    for epc in sorted(int(c, 16) for c in maps["9f"] or []):
        await api.echonetMessage(host, gc, cc, ci, GET, [{"EPC": epc}])
        replies = heard.get(host, {}).get(eoj, {})
        if eoj != NODE_PROFILE and epc not in MAP_EPCS and isinstance(stored.get(epc), bytes):
            values[f"{epc:02x}"] = stored[epc].hex()  # pychonet's own state
        elif epc in replies:
            values[f"{epc:02x}"] = replies[epc][1].hex()
        if epc in replies:
            esvs[f"{epc:02x}"] = f"{replies[epc][0]:02x}"
    return {"maps": maps, "values": values, "esv": esvs}


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description="pychonet discovers and reads ECHONET Lite nodes")
    p.add_argument("--bind", required=True, help="pychonet's address (port 3610)")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--read", metavar="HOST", help="discover HOST by unicast and read it all")
    what.add_argument("--discover", type=int, metavar="N", help="multicast until N answered")
    p.add_argument("--timeout-s", type=float, default=1.0, help="per request (default 1)")
    args = p.parse_args(argv)
    out = asyncio.run(run(args.bind, args.read, args.discover, args.timeout_s))
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
