"""`capnp`: one trial is one run of the benchmark programs (workloads/capnp/SPEC.md §9).

The driver (drivers/capnp) runs the implementation's program pinned, which times its own
iterations; in the pipe modes it runs the implementation as the server and a client program
joined to it by two pipes: the implementation's own client, or, in the pipe matrix's scenarios
(`peer = "<impl>"` in workload.toml), that implementation's client against every server.

The floor speaks the canonical content encoding, not Cap'n Proto (SPEC §7), so it is left out of
the matrix, and no Cap'n Proto client drives it.
"""

from __future__ import annotations

import json

from msgbench import registry
from msgbench.trials import DriverCall, TrialContext, TrialKind, contract_options


class Capnp(TrialKind):
    name = "capnp"
    description = (
        "the benchmark program times its own iterations; pipe modes join a server and a "
        "client of any language"
    )

    def runnable(self, impl, scenario) -> str | None:
        if not scenario.peer:
            return None
        w = registry.workload(impl.workload)
        if scenario.peer not in w.impls:
            return f"the scenario's client, {scenario.peer}, is not an implementation of capnp"
        if impl.id == w.baseline:
            return "the floor speaks CCE, not Cap'n Proto (SPEC §7): no other client can drive it"
        return None

    def call(self, ctx: TrialContext) -> DriverCall:
        w, s, impl = ctx.workload, ctx.scenario, ctx.impl
        options = contract_options(ctx)
        client = w.impls[s.peer].client_argv() if s.peer else impl.client_argv()
        options["client-json"] = json.dumps(client) if client else None
        return DriverCall(
            base=[*w.driver(s.driver), *ctx.scenario_argv()],
            options=options,
            impl_argv=ctx.impl_argv(impl.argv()),
        )


KIND = Capnp()
