"""`echonet`: the driver starts the node(s) on the scenario's hosts and is the controller.

ECHONET Lite fixes UDP port 3610 on every host, so a node needs an address of its own: every
echonet scenario declares `hosts` in workload.toml — two loopback addresses for unicast
scenarios, network namespaces (msgbench.topology) for multicast discovery and loss. The runner
sets the hosts up once per scenario and tears them down after its last trial; this kind tells
the driver which address and namespace each side has (drivers/echonet: --node-addrs,
--node-netns, --ctl-addr, --ctl-netns) and, for `own_client` scenarios, the implementation's own
controller (--client-json). The node's command line gets --bind/--ifaddr/--port from the driver
(SPEC §7), so manifests hold only the program.
"""

from __future__ import annotations

import json

from msgbench.trials import DriverCall, TrialContext, TrialFailed, TrialKind, contract_options

PORT = 3610


class Echonet(TrialKind):
    name = "echonet"
    description = "the driver starts the node(s) on the scenario's hosts and loads them over UDP"

    def call(self, ctx: TrialContext) -> DriverCall:
        w, s, impl, hosts = ctx.workload, ctx.scenario, ctx.impl, ctx.hosts
        if hosts is None:
            raise TrialFailed(f"scenario {s.name} declares no hosts (workload.toml `hosts`)")
        options = contract_options(ctx)
        options["port"] = str(PORT)
        options["node-addrs"] = ",".join(h.addr for h in hosts.impls)
        options["ctl-addr"] = hosts.driver.addr
        if hosts.netns:
            options["node-netns"] = ",".join(h.netns for h in hosts.impls)
            options["ctl-netns"] = hosts.driver.netns
        client = impl.client_argv() if s.own_client else []
        options["client-json"] = json.dumps(client) if client else None
        return DriverCall(
            base=[*w.driver(s.driver), *ctx.scenario_argv()],
            options=options,
            impl_argv=ctx.impl_argv(impl.argv()),
        )


KIND = Echonet()
