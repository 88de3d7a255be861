"""`server`: the driver starts the implementation as a server on a free loopback port, waits
until it accepts, loads it, and stops it with SIGTERM. With `own_client`, the scenario's load is
the implementation's own client program (passed as --client-json). When a hosts file puts the
implementation on another host (docs/hosts.md), the host agent there starts it on a port free
at that host's address, and the driver loads it across the network."""

from __future__ import annotations

import json
import socket

from ..hostagent import AgentError
from ..hosts import LOOPBACK
from ..sites import SiteError
from . import DriverCall, TrialContext, TrialFailed, TrialKind, contract_options


def free_port() -> int:
    """A free loopback port (the kernel's choice; released at once, so a race with another
    program is possible, but the driver then fails clearly at start-up)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server(TrialKind):
    name = "server"
    description = "the driver starts the implementation on a free port ({port}), loads it, stops it"
    splits = True

    def call(self, ctx: TrialContext) -> DriverCall:
        w, s, impl = ctx.workload, ctx.scenario, ctx.impl
        options = contract_options(ctx)
        split = ctx.split()
        if split is None:
            host, port = LOOPBACK, free_port()
        else:  # on another host: its agent starts it there, at that host's address
            _, there = split
            try:
                options["impl-agent"] = there.agent(ctx.log_dir, ctx.cpus()[1])
                host, port = there.addr, there.free_port()
            except (SiteError, AgentError, OSError) as e:
                raise TrialFailed(f"the implementation's host {there.name}: {e}") from None
            options["impl-host"] = host
        options["port"] = str(port)
        client = impl.client_argv(port, host)
        options["client-json"] = json.dumps(client) if client else None
        return DriverCall(
            base=[*w.driver(s.driver), *ctx.scenario_argv()],
            options=options,
            impl_argv=ctx.impl_argv(impl.argv(port, host)),
        )


KIND = Server()
