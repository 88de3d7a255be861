"""`stdio`: the driver launches the implementation itself and talks to it over pipes, as a
browser launches a native-messaging host."""

from __future__ import annotations

from . import DriverCall, TrialContext, TrialKind, contract_options


class Stdio(TrialKind):
    name = "stdio"
    description = "the driver starts the implementation and speaks to it over its stdin/stdout"

    def call(self, ctx: TrialContext) -> DriverCall:
        w, s = ctx.workload, ctx.scenario
        return DriverCall(
            base=[*w.driver(s.driver), *ctx.scenario_argv()],
            options=contract_options(ctx),
            impl_argv=ctx.impl_argv(ctx.impl.argv()),
        )


KIND = Stdio()
