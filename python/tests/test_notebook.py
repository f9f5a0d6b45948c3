"""examples/quickstart.ipynb runs from top to bottom (nbclient), so it never rots."""

import pytest

from conftest import ROOT

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")


def test_quickstart_notebook_executes(tmp_path):
    nb = nbformat.read(ROOT / "examples" / "quickstart.ipynb", as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    # the figures were drawn (one image per figure cell)
    assert sum("image/png" in o.get("data", {}) for o in outputs) >= 4
