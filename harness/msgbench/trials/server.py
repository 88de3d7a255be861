"""`server`: the driver starts the implementation as a server on a free loopback port, waits
until it accepts, loads it, and stops it with SIGTERM. With `own_client`, the scenario's load is
the implementation's own client program (passed as --client-json)."""

from __future__ import annotations

import json
import socket

from . import DriverCall, TrialContext, TrialKind, contract_options


def free_port() -> int:
    """A free loopback port (the kernel's choice; released at once, so a race with another
    program is possible, but the driver then fails clearly at start-up)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server(TrialKind):
    name = "server"
    description = "the driver starts the implementation on a free port ({port}), loads it, stops it"

    def call(self, ctx: TrialContext) -> DriverCall:
        w, s, impl = ctx.workload, ctx.scenario, ctx.impl
        port = free_port()
        options = contract_options(ctx)
        options["port"] = str(port)
        client = impl.client_argv(port)
        options["client-json"] = json.dumps(client) if client else None
        return DriverCall(
            base=[*w.driver(s.driver), *ctx.scenario_argv()],
            options=options,
            impl_argv=ctx.impl_argv(impl.argv(port)),
        )


KIND = Server()
