"""The Kubernetes manifests (deploy/k8s/kvframe.yaml) against the real binary:
the worker's arguments start a kvframe-serve, its readiness and liveness
probes pass against it and fail once it is gone. (No cluster here: this is
what can be checked without one; docs/deploy.md.)"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import kvframe
from conftest import REPO, free_port, model_path, server_binary

yaml = pytest.importorskip("yaml")  # Debian's python3-yaml

MANIFEST = REPO / "deploy" / "k8s" / "kvframe.yaml"


def worker_container() -> dict:
    documents = list(yaml.safe_load_all(MANIFEST.read_text()))
    kinds = {d["kind"] for d in documents}
    assert kinds == {"Deployment", "Service", "PodDisruptionBudget"}, kinds
    deployment = next(d for d in documents if d["kind"] == "Deployment")
    service = next(d for d in documents if d["kind"] == "Service")
    assert service["spec"]["selector"] == deployment["spec"]["template"]["metadata"]["labels"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return container


def localized(words: list[str], keys: Path, port: int) -> list[str]:
    """The manifest's words with the Secret's mount and the pod's port made local."""
    return [w.replace("/keys/", f"{keys}/").replace("127.0.0.1:5555", f"127.0.0.1:{port}") for w in words]


def test_the_workers_arguments_serve_and_its_probes_see_it(tmp_path):
    container = worker_container()
    serve = server_binary()
    keys = tmp_path / "keys"
    keys.mkdir()
    for name in ("server", "probe", "game"):
        subprocess.run([serve, "--gen-keys", str(keys / name)], check=True, capture_output=True)
    (keys / "allowed.pub").write_text((keys / "game.pub").read_text() + (keys / "probe.pub").read_text())

    port = free_port()
    # This machine's share, not a node's: fewer threads, a smaller block store.
    small = {"--threads": "--threads=1", "--cache-mb": "--cache-mb=256"}
    args = [small.get(a.split("=")[0], a) for a in localized(container["args"], keys, port)]
    readiness = localized(container["readinessProbe"]["exec"]["command"], keys, port)
    liveness = localized(container["livenessProbe"]["exec"]["command"], keys, port)
    assert readiness[0] == liveness[0] == "kvframe-serve"

    server = kvframe.ServerProcess(serve, model=model_path(), bind=f"tcp://127.0.0.1:{port}", args=args)
    server.start()
    try:
        for probe in (readiness, liveness):
            done = subprocess.run([serve] + probe[1:], capture_output=True, text=True, timeout=30)
            assert done.returncode == 0, done.stdout + done.stderr
            assert done.stdout.startswith("ok "), done.stdout
    finally:
        assert server.stop() == 0
    gone = subprocess.run([serve] + readiness[1:], capture_output=True, text=True, timeout=30)
    assert gone.returncode == 4, gone.stdout
