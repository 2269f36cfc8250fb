"""Who can do what survives the trip: for generated configurations and for every template of the sandbox, the
access computed on the configuration equals the access on the sandbox guild a deploy builds from it, and on that
guild's export (docs/05-deploy-engine.md, "Exact access"). A difference fails naming the place, role and
permission; the counts are printed."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings

from local.chat_sandbox import SandboxState
from local.chat_sandbox.routes.templates import templates as sandbox_templates
from svcconf.chat import ChatClient
from svcconf.config import ServerConfig
from svcconf.config.access import Access, access_differences, config_access
from svcconf.deploy_engine.apply import PlanApplier, StepOutcome
from svcconf.deploy_engine.export import export_config
from svcconf.deploy_engine.live import guild_access, read_live_guild
from svcconf.deploy_engine.native_template import template_config, template_guild
from svcconf.deploy_engine.plan import plan_deployment
from tests.helpers.chat_sandbox import BUILD_GUILD
from tests.helpers.generated_configs import configurations

EXAMPLES = 30


class Trip:
    """Deploys configurations to the sandbox's empty guild with the engine and compares access on the way."""

    def __init__(self, client: ChatClient, state: SandboxState):
        self.client, self.state = client, state
        self.counts: Counter[str] = Counter()

    def check(self, config: ServerConfig, expected: Access | None = None) -> None:
        """Deploy `config` to an empty guild; its access (or `expected`) must be the guild's and its export's."""
        self.state.reset()
        empty = read_live_guild(self.client, BUILD_GUILD)
        expected = expected or config_access(config, int(empty.everyone.permissions))
        outcomes: list[StepOutcome] = []
        plan = plan_deployment(empty, config)
        PlanApplier(self.client, BUILD_GUILD, plan, audit_reason="exact access").run(
            skip=set(), checkpoint=outcomes.append, has_time=lambda: True
        )
        assert [error for outcome in outcomes for error in outcome.errors] == []
        deployed = read_live_guild(self.client, BUILD_GUILD)
        found = guild_access(deployed)
        export = export_config(deployed, self.client.get_guild(BUILD_GUILD))
        exported = export.config
        differences = [
            *(f"deployed: {d}" for d in access_differences(expected, found)),
            *(f"exported: {d}" for d in access_differences(found, config_access(exported))),
        ]
        self.counts["guilds"] += 1
        self.counts["places x roles"] += len(expected)
        self.counts["differences"] += len(differences)
        assert differences == []
        assert [w.message for w in export.warnings if w.rule == "unrepresentable"] == []
        assert plan_deployment(deployed, exported).steps == []  # deploying the export back writes nothing

    def report(self, what: str) -> None:
        print(f"\n{what}: " + ", ".join(f"{name} {count}" for name, count in self.counts.items()))


def test_generated_configurations_grant_on_the_deployed_guild_and_its_export_exactly_what_they_say(
    chat_client: ChatClient, chat_state: SandboxState
):
    trip = Trip(chat_client, chat_state)

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(configurations())
    def deploys_exactly(config: ServerConfig) -> None:
        trip.counts["configurations"] += 1
        trip.check(config)

    deploys_exactly()

    trip.report("generated configurations")
    assert trip.counts["configurations"] == EXAMPLES
    assert trip.counts["differences"] == 0


def test_every_sandbox_template_grants_what_it_did_once_imported_deployed_and_exported(
    chat_client: ChatClient, chat_state: SandboxState
):
    trip = Trip(chat_client, chat_state)

    for code in sandbox_templates():
        snapshot = chat_client.get_template(code).serialized_source_guild
        described = guild_access(template_guild(snapshot))
        imported = template_config(snapshot)

        assert access_differences(described, config_access(imported.config)) == [], code
        assert [w for w in imported.warnings if w.rule == "unrepresentable"] == []
        trip.counts["templates"] += 1
        trip.check(imported.config, described)

    trip.report("sandbox templates")
    assert trip.counts["templates"] == len(sandbox_templates())
