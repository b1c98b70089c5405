"""The lock file: every package the project installs at an exact version with its hashes, the
whole of pyproject.toml's dependencies (every extra), installed by `make` and nothing else."""

from __future__ import annotations

import re
import subprocess
import sysconfig
from importlib import metadata

import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.support.paths import ROOT

LOCK = ROOT / "requirements.lock"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[a-z0-9,_-]+\])?==(\S+)")
HASH = re.compile(r"--hash=sha256:([0-9a-f]{64})")


def locked() -> dict[str, tuple[Version, list[str]]]:
    """name -> (version, sha256 hashes) of every requirement in the lock."""
    pins: dict[str, tuple[Version, list[str]]] = {}
    name = None
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        match = PIN.match(line)
        if match:
            name = canonicalize_name(match.group(1))
            assert name not in pins, f"{name} pinned twice"
            pins[name] = (Version(match.group(2).rstrip(" \\")), [])
        elif name and HASH.search(line):
            pins[name][1].append(HASH.search(line).group(1))
        elif line.strip() and not line.lstrip().startswith("#"):
            raise AssertionError(f"unexpected line in the lock: {line!r}")
    return pins


def project_requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project.get("optional-dependencies", {})
    return [Requirement(r) for r in project["dependencies"] + sum(extras.values(), [])]


def test_every_pin_is_exact_and_hashed():
    pins = locked()
    assert len(pins) > 50
    for name, (_, hashes) in pins.items():
        assert hashes, f"{name} has no hash in the lock"


def test_the_lock_holds_every_dependency_of_pyproject_and_every_extra():
    pins = locked()
    for requirement in project_requirements():
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement} is not in the lock: run make lock"
        version, _ = pins[name]
        assert requirement.specifier.contains(version, prereleases=True), (
            f"the lock has {name}=={version}, pyproject.toml asks for {requirement}: run make lock"
        )


def test_torch_is_the_cpu_build_with_only_its_own_hash():
    version, hashes = locked()["torch"]
    assert version == Version("2.13.0+cpu")  # never a CUDA build of several GB
    assert len(hashes) == 1  # the local CPU wheel's: a CUDA wheel of 2.13.0 does not match


def test_the_environment_is_the_lock():
    """The venv `make` made holds exactly the locked versions, and nothing the lock lacks
    (but pip, which the venv brings, and this project). Only the venv's own site-packages are
    read: Ray, once imported, puts the packages it vendors (psutil, colorama) on sys.path."""
    pins = locked()
    site = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    installed = {
        canonicalize_name(d.metadata["Name"]): d.version for d in metadata.distributions(path=site)
    }
    for name, (version, _) in pins.items():
        assert name in installed, f"{name} is locked but not installed: run make"
        assert Version(installed[name]) == version, f"{name} {installed[name]} != lock {version}"
    extra = set(installed) - set(pins) - {"pip", canonicalize_name("topicmap-pipeline")}
    assert not extra, f"installed but not locked: {sorted(extra)}"


def test_make_installs_the_lock_with_hashes_and_the_project_without_dependencies():
    result = subprocess.run(
        ["make", "--no-print-directory", "-n", "-B", "venv"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    commands = result.stdout.splitlines()
    assert any("about 2.2 GB" in c for c in commands)  # the first make says what it installs
    installs = [c for c in commands if " -m pip install " in c]
    assert "--require-hashes" in installs[0] and "-r requirements.lock" in installs[0]
    assert "--quiet" not in installs[0]  # pip's progress shows
    assert "--no-deps" in installs[1] and "-e ." in installs[1]
    assert len(installs) == 2  # nothing installed beside the lock


def test_make_lock_resolves_with_hashes_into_the_lock():
    result = subprocess.run(
        ["make", "--no-print-directory", "-n", "lock"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    recipe = re.sub(r"\\\n\s*", " ", result.stdout)  # one line per command
    compile_line = next(c for c in recipe.splitlines() if "pip-compile --" in c)
    for option in ("--generate-hashes", "--all-extras", "--output-file requirements.lock"):
        assert option in compile_line
    assert "pyproject.toml" in compile_line
