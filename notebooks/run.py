#!/usr/bin/python3
"""Notebooks, headless runner (DESIGN.md §3): executes every notebook (or the ones named) with the
committed merit-tslab kernel through nbclient, prints each failing cell's error (nbconvert hides
them), writes the outputs back without timings so they are byte-stable, and ends with the line
`N passed, N failed` (one count per notebook). A notebook whose own check prints
"identical to FILE: false" (its recomputation differs from the committed report) fails too.

Run it with Debian's python (apt: jupyter-nbconvert jupyter-client python3-nbclient python3-ipykernel),
never a pyenv/conda python3:  /usr/bin/python3 notebooks/run.py [--check] [--timeout S] [NAME ...]
  --check    execute but do not write outputs back (CI on a clean tree)
  NAME       a notebook file or a prefix such as 01 (default: every notebooks/*.ipynb, sorted)
"""
import argparse
import os
import re
import sys
import time

try:
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
except ImportError as error:  # the message names the fix
    sys.exit(f"run.py: {error}. Install Debian's jupyter: apt-get install -y --no-install-recommends "
             "jupyter-nbconvert jupyter-client python3-nbclient python3-ipykernel; run with /usr/bin/python3")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
KERNEL = "merit-tslab"


def select(names):
    """The notebooks to run, sorted; a name may be a file path or a file-name prefix."""
    every = sorted(f for f in os.listdir(HERE) if f.endswith(".ipynb"))
    if not names:
        return [os.path.join(HERE, f) for f in every]
    chosen = []
    for name in names:
        if os.path.isfile(name):
            chosen.append(os.path.abspath(name))
            continue
        hits = [f for f in every if f.startswith(os.path.basename(name))]
        if not hits:
            sys.exit(f"run.py: no notebook matches {name!r}; known: {', '.join(every)}")
        chosen.extend(os.path.join(HERE, f) for f in hits)
    return chosen


def error_text(cell):
    """What a failed cell reported: tslab prints compile and runtime errors on stderr, not as error outputs."""
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            parts.append("\n".join(out.get("traceback", [])) or f"{out.get('ename')}: {out.get('evalue')}")
        elif out.get("output_type") == "stream" and out.get("name") == "stderr":
            parts.append(out.get("text", ""))
    return "".join(parts).rstrip() or "(the kernel reported an error without a message)"


# A notebook's own check against the committed outputs ("identical to results/…: false"): a cell that
# prints it ran without an error, but the notebook's recomputation and the report disagree.
MISMATCH = re.compile(r"identical to [^\n]*: false\b")


def mismatches(nb):
    """(cell index, line) of every stdout line of a failed self-check."""
    found = []
    for index, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if out.get("output_type") == "stream" and out.get("name") == "stdout":
                found.extend((index, m.group(0)) for m in MISMATCH.finditer(out.get("text", "")))
    return found


def run_one(path, timeout, write):
    """Executes one notebook; returns (ok, seconds)."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name=KERNEL,
        record_timing=False,
        allow_errors=False,
        resources={"metadata": {"path": ROOT}},
    )
    failed = []

    def on_cell_executed(cell, cell_index, execute_reply):
        if execute_reply.get("content", {}).get("status") == "error":
            failed.append(cell_index)

    client.on_cell_executed = on_cell_executed
    start = time.monotonic()
    try:
        client.execute()
    except CellExecutionError:
        pass  # reported below from the cell's own outputs
    except (CellTimeoutError, DeadKernelError) as error:
        print(f"FAIL {os.path.basename(path)}: {type(error).__name__}: {error}", flush=True)
        failed.append(None)
    seconds = time.monotonic() - start
    wrong = mismatches(nb)
    for index, line in wrong:
        print(f"FAIL {os.path.basename(path)}, cell {index}: its check printed \"{line}\": the notebook's result and the committed report disagree (rerun make demo / make demo-peers, then this notebook)", flush=True)
    ok = not failed and not wrong
    for index in (i for i in failed if i is not None):
        cell = nb.cells[index]
        print(f"FAIL {os.path.basename(path)}, cell {index}:\n{cell.source}\n--- error ---\n{error_text(cell)}", flush=True)
        for later in nb.cells[index + 1:]:  # stale outputs of cells that did not run would mislead
            if later.cell_type == "code":
                later.outputs = []
                later.execution_count = None
    if write:
        nbformat.write(nb, path)
    return ok, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*")
    parser.add_argument("--check", action="store_true", help="do not write outputs back")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell (default 600)")
    args = parser.parse_args()
    os.environ["JUPYTER_PATH"] = os.pathsep.join(p for p in (HERE, os.environ.get("JUPYTER_PATH", "")) if p)
    os.environ.setdefault("NODE_LLAMA_CPP_SKIP_DOWNLOAD", "true")
    os.environ.setdefault("NO_COLOR", "1")
    passed = failed = 0
    for path in select(args.names):
        print(f"run {os.path.relpath(path, ROOT)} ...", flush=True)
        ok, seconds = run_one(path, args.timeout, not args.check)
        print(f"{'ok  ' if ok else 'FAIL'} {os.path.basename(path)} ({seconds:.1f} s)", flush=True)
        passed += ok
        failed += not ok
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
