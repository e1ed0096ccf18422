"""Parsing in worker processes: the upload path parses files off the event loop, in a process that is killed
when it overruns its time budget (a thread could not be stopped), so a hostile file costs at most PARSE_TIMEOUT
seconds of one core and never blocks the service."""

from __future__ import annotations

import asyncio
import importlib
import logging
import math
import multiprocessing
import resource
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import app
from app.core.errors import InvalidInput
from app.services.ingest.parsing.formats import ParseLimits, extract_text, parser_for, plain_text

log = logging.getLogger(__name__)

_ROOT = str(Path(app.__file__).resolve().parents[1])  # the directory holding the `app` package
_BOOT = (
    "import sys; sys.path.insert(0, sys.argv[3]); from app.services.ingest.parsing.isolation import _serve; _serve()"
)
_START_TIMEOUT = 60.0
_RETIRE_RSS_KB = 512 * 1024  # a worker whose peak grew past this exits after answering; a fresh one follows


class _Worker:
    """One parser process, spoken to over two pipes; killed rather than reused when it overruns."""

    def __init__(self) -> None:
        job_reader, self._jobs = multiprocessing.Pipe(duplex=False)
        self._results, result_writer = multiprocessing.Pipe(duplex=False)
        fds = (job_reader.fileno(), result_writer.fileno())
        self.process = subprocess.Popen(
            [sys.executable, "-c", _BOOT, *map(str, fds), _ROOT], pass_fds=fds, stdin=subprocess.DEVNULL
        )
        job_reader.close()
        result_writer.close()
        try:
            if not self._results.poll(_START_TIMEOUT) or self._results.recv() != "ready":
                raise RuntimeError("the parser process did not start")
        except BaseException as exc:
            self.kill()
            raise RuntimeError("the parser process did not start") from exc

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def send(self, job: tuple) -> None:
        self._jobs.send(job)

    def answer(self, timeout: float) -> tuple:
        """The worker's answer, or TimeoutError after `timeout` seconds; EOFError when the process died."""
        if not self._results.poll(timeout):
            raise TimeoutError
        return self._results.recv()

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()
        self._jobs.close()
        self._results.close()


class _Pool:
    def __init__(self) -> None:
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()
        self._executors: dict[int, ThreadPoolExecutor] = {}

    def executor(self, workers: int) -> ThreadPoolExecutor:
        """Threads that wait on the workers; their number bounds the parses running at once."""
        with self._lock:
            if workers not in self._executors:
                self._executors[workers] = ThreadPoolExecutor(workers, thread_name_prefix="file-parsing")
            return self._executors[workers]

    def pids(self) -> list[int]:
        with self._lock:
            return [worker.process.pid for worker in self._idle]

    def run(self, job: tuple, timeout: float) -> tuple:
        """(kind, payload, code) from a worker; the worker is killed on any failure, kept only when healthy."""
        worker = self._take()
        try:
            try:
                worker.send(job)
            except OSError:  # it died while idle, so the job never reached it: one fresh try
                worker.kill()
                worker = _Worker()
                worker.send(job)
            kind, payload, code, retiring = worker.answer(timeout)
        except BaseException:
            worker.kill()
            raise
        if retiring:
            worker.kill()
        else:
            with self._lock:
                self._idle.append(worker)
        return kind, payload, code

    def _take(self) -> _Worker:
        with self._lock:
            while self._idle:
                worker = self._idle.pop()
                if worker.alive:
                    return worker
                worker.kill()  # reap it
        return _Worker()


_POOL = _Pool()


def worker_pids() -> list[int]:
    """Process ids of the idle parser processes, the next one to be used last (for tests and benchmarks)."""
    return _POOL.pids()


def _run_isolated(filename: str, data: bytes, limits: ParseLimits) -> str:
    try:
        job = (filename, data, limits.max_decompressed_bytes, limits.timeout)
        kind, payload, code = _POOL.run(job, limits.timeout)
    except TimeoutError:
        log.warning("parsing %s took longer than %.3g s: its parser process was killed", filename, limits.timeout)
        raise InvalidInput(
            f"{filename}: parsing took longer than the limit of {limits.timeout:g} s (PARSE_TIMEOUT)",
            code="parse_timeout",
        ) from None
    except (EOFError, OSError):
        log.warning("the parser process died while reading %s", filename)
        raise InvalidInput(
            f"{filename}: the file could not be parsed (the parser process died)", code="invalid_file"
        ) from None
    if kind != "ok":
        raise InvalidInput(payload, code=code)
    return payload


async def extract_text_isolated(filename: str, data: bytes, limits: ParseLimits) -> str:
    """`extract_text` off the event loop: plain text in a thread, other types in a worker process that is
    killed after `limits.timeout` seconds (422 parse_timeout)."""
    if parser_for(filename) is plain_text:
        return await asyncio.to_thread(extract_text, filename, data, limits)
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_POOL.executor(limits.workers), _run_isolated, filename, data, limits)


def _serve() -> None:
    """A worker process's loop: (filename, data, decompression cap, budget) in, (kind, text or detail, code,
    retiring) out, until the parent closes the pipe or this process grew too big to keep."""
    from multiprocessing.connection import Connection

    jobs, results = Connection(int(sys.argv[1]), writable=False), Connection(int(sys.argv[2]), readable=False)
    for module in ("docx", "pypdf"):  # loaded before the first job's clock starts
        importlib.import_module(module)

    results.send("ready")
    while True:
        try:
            filename, data, cap, budget = jobs.recv()
        except EOFError:
            return
        _limit_cpu(budget)
        answer = _answer(filename, data, cap)
        retiring = peak_rss_kb() > _RETIRE_RSS_KB
        results.send((*answer, retiring))
        if retiring:
            return


def peak_rss_kb() -> int:
    """This process's own peak resident size. Linux keeps ru_maxrss across fork and exec, so a worker started
    by a parent that once grew past the limit would read the parent's peak and retire after every job."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _limit_cpu(budget: float) -> None:
    """The kernel ends this process (SIGXCPU) about a second past the job's budget: the parent kills it sooner,
    but if the parent itself died mid-job, no one else would."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = math.ceil(usage.ru_utime + usage.ru_stime + budget) + 1
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    if hard == resource.RLIM_INFINITY or soft < hard:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _answer(filename: str, data: bytes, cap: int) -> tuple[str, str, str | None]:
    try:
        return "ok", extract_text(filename, data, ParseLimits(max_decompressed_bytes=cap)), None
    except InvalidInput as exc:
        return "error", exc.detail, exc.code
    except Exception as exc:
        log.exception("parsing %s failed", filename)
        return "error", f"{filename}: the file could not be parsed ({type(exc).__name__})", "invalid_file"
