"""Execute the book's pages in parallel, one kernel per CPU core, before Sphinx reads them.

myst-nb (``execute_notebooks: cache``) runs the pages one after another, and every page of this
book sets ``torch.set_num_threads(1)``: on a machine with two cores, half of it sits idle through
the twenty minutes a fresh build spends training models. This extension runs first: when Sphinx
has worked out which pages it will read (the ``env-before-read-docs`` event), it reads each one
with myst-nb's own reader, asks the same jupyter-cache whether its code has been executed
already, and executes the pages that have not in a pool of worker processes, storing each result
in that cache exactly as myst-nb would. myst-nb then finds every page in the cache and only
renders it.

A page whose kernel failed (it died, did not start, or raised a ZeroMQ error: :data:`KERNEL_FAILURES`)
is started again here in a fresh kernel, up to :data:`PAGE_STARTS` times: on a busy machine a kernel
raised "ZMQError: Socket operation on non-socket" and its page failed. A page that fails otherwise
(one of its cells raised, or ran past the timeout, which is 4 times the slowest page's time) is not
stored: myst-nb executes it again, on its own, and reports the error the usual way. Each page still
runs alone in its own kernel, from its own folder, so what it computes does not depend on this
extension; single-thread timings a page measures may come out a little slower while another page
runs on the other core.

After a cell's reply, nbclient waits ``iopub_timeout`` seconds (4 by default) for the rest of the
cell's output and, by default, goes on without it: in a build beside other work (load 15-18 on 2
cores) the last glued values of ch09_pronunciation's and ch12_adapt's slowest cells were lost that
way, with no error, and the build failed on the missing glue keys. Pages here wait up to
:data:`IOPUB_WAIT` seconds, and a wait that runs out fails the page instead of dropping its output.

Configuration (``_config.yml``, ``sphinx: config:``): ``nb_parallel_jobs``, the number of pages
run at once (default: the number of CPU cores; 1 leaves the execution to myst-nb);
``nb_parallel_first``, docnames of the slowest pages, started first in that order (the others
follow in Sphinx's order), so that a long page does not start last and run alone at the end.
"""

from __future__ import annotations

import copy
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path, PurePosixPath

from sphinx.util import logging

logger = logging.getLogger(__name__)


#: How many times a page is started in a fresh kernel when its kernel failed, before it is left to myst-nb.
PAGE_STARTS = 3
#: What a failure says when the kernel failed, not the page's code. Kernels starting at the same moment in
#: two processes can be handed the same free TCP port (jupyter_client picks the ports, the kernel binds them a
#: moment later): the loser dies with "Address already in use", reported as "Kernel died before replying to
#: kernel_info". A kernel whose ZeroMQ sockets broke raised "ZMQError".
KERNEL_FAILURES = ("Kernel died", "DeadKernelError", "ZMQError")
#: Seconds to wait, after a cell's reply, for the rest of its output (nbclient's ``iopub_timeout``): a wait that
#: ends at once when nothing is wrong, long enough for a kernel that gets a sliver of a busy machine.
IOPUB_WAIT = 600


def _execute(notebook, cwd: str, timeout: int, allow_errors: bool):
    """Run ``notebook`` in a fresh kernel (in a worker process), started again when its kernel failed
    (:data:`KERNEL_FAILURES`); return it, seconds, any error and how many starts it took.

    Any exception comes back as the page's error, so that myst-nb runs the page itself, instead of
    stopping the whole build.
    """
    from jupyter_cache.executors.utils import single_nb_execution

    for start in range(1, PAGE_STARTS + 1):
        page = copy.deepcopy(notebook)  # executed in place: a new start begins from the page as written
        try:
            result = single_nb_execution(page, cwd=cwd, timeout=timeout, allow_errors=allow_errors,
                                         meta_override=True, iopub_timeout=IOPUB_WAIT, raise_on_iopub_timeout=True)
        except Exception as error:  # noqa: BLE001 - whatever it is, myst-nb runs the page again and reports it
            seconds, failure = 0.0, f"{type(error).__name__}: {error}"
        else:
            if result.err is None:
                return page, result.time, None, start
            seconds, failure = result.time, result.exc_string or repr(result.err)
        if start == PAGE_STARTS or not any(mark in failure for mark in KERNEL_FAILURES):
            return page, seconds, failure, start
        time.sleep(start)


def _pages_to_execute(env, cache, docnames: list[str]) -> list[tuple[str, Path, object]]:
    """(docname, path, notebook) of each page to be read that myst-nb would execute: not in ``cache`` yet."""
    from myst_nb.core.read import create_nb_reader

    config = env.mystnb_config
    pages = []
    for docname in docnames:
        path = Path(env.doc2path(docname))
        if any(PurePosixPath(path.as_posix()).match(p) for p in config.execution_excludepatterns):
            continue
        text = path.read_text(encoding="utf-8")
        reader = create_nb_reader(str(path), env.myst_config, config, text)
        if reader is None:
            continue  # a plain Markdown page: nothing to execute
        notebook = reader.read(text)
        if not any(cell.cell_type == "code" for cell in notebook.cells):
            continue
        try:
            cache.match_cache_notebook(notebook)
        except KeyError:
            pages.append((docname, path, notebook))
    return pages


def execute_in_parallel(app, env, docnames: list[str]) -> None:
    """Fill myst-nb's cache with the pages about to be read, ``nb_parallel_jobs`` at a time."""
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    config = env.mystnb_config
    jobs = app.config.nb_parallel_jobs or os.cpu_count() or 1
    if config.execution_mode != "cache" or jobs < 2:
        return
    cache = get_cache(config.execution_cache_path)
    pages = _pages_to_execute(env, cache, docnames)
    if len(pages) < 2:
        return
    first = list(app.config.nb_parallel_first)
    pages.sort(key=lambda page: first.index(page[0]) if page[0] in first else len(first))
    logger.info(f"[parallel_execution] executing {len(pages)} pages, {jobs} at a time")
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=min(jobs, len(pages))) as pool:
        running = {pool.submit(_execute, notebook, str(path.parent), config.execution_timeout,
                               config.execution_allow_errors): (docname, path)
                   for docname, path, notebook in pages}
        for done in as_completed(running):
            docname, path = running[done]
            notebook, seconds, error, starts = done.result()
            again = f", started {starts} times (its kernel failed)" if starts > 1 else ""
            if error is not None:
                logger.info(f"[parallel_execution] {docname} failed after {seconds:.0f} s{again} "
                            f"({error.strip().splitlines()[-1]}); myst-nb will run it again and report the error")
                continue
            cache.cache_notebook_bundle(CacheBundleIn(notebook, str(path), data={"execution_seconds": seconds}),
                                        check_validity=False, overwrite=True)
            logger.info(f"[parallel_execution] {docname} executed in {seconds:.0f} s{again}")
    logger.info(f"[parallel_execution] all pages executed in {time.perf_counter() - start:.0f} s")


def setup(app) -> dict:
    app.add_config_value("nb_parallel_jobs", 0, "", [int])
    app.add_config_value("nb_parallel_first", [], "", [list])
    app.connect("env-before-read-docs", execute_in_parallel)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
