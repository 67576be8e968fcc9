"""The notebooks run top to bottom, offline (same as `pytest --nbmake notebooks`)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes(path: Path, tmp_path: Path) -> None:
    nbclient = pytest.importorskip("nbclient")
    from jupyter_client.manager import KernelManager

    nb = nbformat.read(path, as_version=4)
    # IPC (unix socket) transport: the test run forbids TCP sockets, kernels included.
    # The sockets go under tmp_path, not the working directory.
    km = KernelManager(kernel_name="python3", transport="ipc", ip=str(tmp_path / "kernel-ipc"))
    client = nbclient.NotebookClient(
        nb,
        km=km,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent.parent)}},
    )
    client.execute()
    errors = [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if o.get("output_type") == "error"
    ]
    assert not errors
