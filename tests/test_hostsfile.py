"""hosts.toml (docs/hosts.md): what a valid file says, and a clear error for every invalid one."""

from __future__ import annotations

import pytest

from msgbench import hostsfile
from msgbench.hostsfile import HostsFileError

ROLES = """
[hosts.a]
kind = "netns"
[hosts.b]
kind = "netns"
cpus = [1]
[roles]
driver = "a"
impl = "b"
"""

SWEEP = """
[hosts.head]
kind = "ray"
node = "10.0.0.1"
[hosts.worker]
kind = "ray"
node = "10.0.0.2"
[ray]
address = "10.0.0.1:6379"
[sweep]
nodes = ["head", "worker"]
concurrent = true
"""


def load(tmp_path, text):
    p = tmp_path / "hosts.toml"
    p.write_text(text)
    return hostsfile.load(p)


def test_roles_file(tmp_path):
    hf = load(tmp_path, ROLES)
    assert hf.kind == "netns" and hf.split
    assert hf.roles == {"driver": "a", "impl": "b"}
    assert hf.hosts["b"].cpus == (1,) and hf.hosts["a"].cpus == ()
    record = hf.as_json()
    assert record["roles"] == {"driver": "a", "impl": "b"} and record["sweep"] is None


def test_sweep_file(tmp_path):
    hf = load(tmp_path, SWEEP)
    assert hf.kind == "ray" and not hf.split
    assert hf.sweep == ("head", "worker") and hf.concurrent
    assert hf.ray_address == "10.0.0.1:6379"
    assert hf.as_json()["sweep"] == {"nodes": ["head", "worker"], "concurrent": True}


def test_one_host_for_both_roles_is_not_split(tmp_path):
    hf = load(tmp_path, '[hosts.x]\nkind = "local"\n[roles]\ndriver = "x"\nimpl = "x"\n')
    assert hf.kind == "local" and not hf.split


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "[hosts.NAME] tables are missing"),
        ("[hosts.a]\nkind = 'vm'\n[roles]\ndriver='a'\nimpl='a'", "kind must be one of"),
        ("[hosts.a]\nkind = 'ray'\n[roles]\ndriver='a'\nimpl='a'", "must name the Ray node"),
        ("[hosts.a]\nkind='netns'\nnode='x'\n[roles]\ndriver='a'\nimpl='a'", "for kind = \"ray\""),
        ("[hosts.a]\nkind = 'netns'\ncpus=['x']\n[roles]\ndriver='a'\nimpl='a'", "cpus must be"),
        ("[hosts.a]\nkind = 'netns'\nspeed=1\n[roles]\ndriver='a'\nimpl='a'", "unknown field"),
        ("[hosts.a]\nkind = 'netns'\n", "give [roles]"),
        ("[hosts.a]\nkind = 'netns'\n[roles]\ndriver='a'", "exactly driver, impl"),
        ("[hosts.a]\nkind = 'netns'\n[roles]\ndriver='a'\nimpl='z'", "'z' is not a [hosts] name"),
        ("[hosts.a]\nkind='netns'\n[hosts.b]\nkind='ray'\nnode='n'\n[roles]\ndriver='a'\nimpl='b'",
         "cannot reach each other"),
        ("[hosts.a]\nkind='netns'\n[sweep]\nnodes=['a']", "two or more distinct hosts"),
        ("[hosts.a]\nkind='netns'\n[hosts.b]\nkind='netns'\n[sweep]\nnodes=['a','b']\n"
         "concurrent='yes'", "true or false"),
        ("[hosts.a]\nkind='netns'\n[roles]\ndriver='a'\nimpl='a'\n[sweep]\nnodes=['a','a']",
         "exclude each other"),
        ("[hosts.a]\nkind='netns'\n[roles]\ndriver='a'\nimpl='a'\n[cluster]\nx=1", "unknown table"),
        ("[hosts.a\n", "not valid TOML"),
    ],
)  # fmt: skip
def test_invalid_files_say_what_is_wrong(tmp_path, text, says):
    with pytest.raises(HostsFileError) as e:
        load(tmp_path, text)
    assert says in str(e.value)
    assert "hosts.toml" in str(e.value)


def test_missing_file(tmp_path):
    with pytest.raises(HostsFileError, match="cannot read it"):
        hostsfile.load(tmp_path / "nope.toml")


def test_the_committed_hosts_files_are_valid():
    from msgbench import paths

    for path in sorted((paths.ROOT / "hosts").glob("*.toml")):
        assert hostsfile.load(path).split, path
