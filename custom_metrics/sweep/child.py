"""One pair's ``lm_eval`` as a child of the sweep: it dies with its sweep, its pid is on disk,
and whoever runs the pair next finds out what became of it.

Why: a dropped login session kills the sweep alone; its ``lm_eval`` ran on and wrote results
while the resume ran the pair again (two results files for one pair). So each child runs in
a process group of its own with a parent-death signal (``prctl(PR_SET_PDEATHSIG)``: SIGTERM
when the sweep dies, even by ``kill -9``; a stopped sweep stops the whole group, ``accelerate``
workers included), and is recorded in ``lm_eval.run.json`` until the pair is judged
(``runner.settle_earlier_run`` reads a record left behind).
"""

from __future__ import annotations

import ctypes
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from custom_metrics.common.errors import DataError
from custom_metrics.common.files import atomic_write_bytes, open_unlinked

RUN_FILE = "lm_eval.run.json"
PR_SET_PDEATHSIG = 1  # linux/prctl.h
STOP_GRACE_S = 10.0  # after SIGTERM, the time a stopped group has to exit before SIGKILL
PID_MAX = 4_194_304  # Linux's largest pid_max (2**22): no process or group id lies above it
POLL_S = 1.0  # how often a process group of an earlier sweep is looked at while waiting for it
_LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def _boot_id() -> str:
    """This boot of this machine: a pid recorded before a reboot names no process now."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def _stat(pid: int | str) -> list[str]:
    """``/proc/<pid>/stat`` from its third field (state) on, the command name before it may hold
    spaces; empty when the process is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return []


def _start_ticks(pid: int) -> int | None:
    """The process's start time (clock ticks since boot), which a reused pid does not share."""
    fields = _stat(pid)
    return int(fields[19]) if fields else None  # field 22


def _in_own_group_dying_with(parent: int) -> Callable[[], None]:
    """The child's first steps after fork: its own process group, SIGTERM when ``parent`` dies."""

    def setup() -> None:
        os.setpgid(0, 0)
        if _LIBC is not None:
            _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
            if os.getppid() != parent:  # the sweep died before the signal was armed
                os.kill(os.getpid(), signal.SIGTERM)

    return setup


def run_child(command: list[str], log: Path, record_in: Path | None = None) -> int:
    """Run ``command`` (output appended to ``log``) as a child that dies with the sweep; its exit
    status. With ``record_in``, the child's run record is written into that folder.

    Whatever stops the sweep while it waits (Ctrl-C, SIGTERM, an error) stops the child's group too.
    A log that is a link is refused (DataError naming it), never appended through.
    """
    descriptor = open_unlinked(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, "sweep log")
    with os.fdopen(descriptor, "a", encoding="utf-8") as handle:
        handle.write(f"\n### {time.strftime('%Y-%m-%d %H:%M:%S')} $ {shlex.join(command)}\n")
        handle.flush()
        process = subprocess.Popen(
            command, stdout=handle, stderr=subprocess.STDOUT, preexec_fn=_in_own_group_dying_with(os.getpid())
        )
    try:
        if record_in is not None:
            write_record(record_in, process.pid, command)
        return process.wait()
    except BaseException:
        stop_group(process)
        raise


@contextmanager
def stopped_by_signals() -> Iterator[None]:
    """SIGTERM and a hang-up end the sweep as Ctrl-C does: through its handlers, so that the
    child's whole group is stopped (the default action would leave ``accelerate``'s workers)."""

    def stop(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    wanted = (signal.SIGTERM, signal.SIGHUP)
    previous = {number: signal.signal(number, stop) for number in wanted}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def stop_group(process: subprocess.Popen) -> None:
    """SIGTERM to the child's whole group, SIGKILL to what is left after ``STOP_GRACE_S``."""
    for sent in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sent)
        except ProcessLookupError:
            break
        try:
            process.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            continue
        if not group_alive(process.pid):
            break


def write_record(folder: Path, pid: int, command: list[str]) -> None:
    record = {
        "host": socket.gethostname(),
        "boot": _boot_id(),
        "pid": pid,
        "process_group": pid,
        "start_ticks": _start_ticks(pid),
        "sweep_pid": os.getpid(),
        "slurm_job": os.environ.get("SLURM_JOB_ID", ""),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "command": command,
    }
    atomic_write_bytes(folder / RUN_FILE, json.dumps(record, indent=2).encode())


def read_record(folder: Path) -> dict[str, Any] | None:
    """The run record of the pair's last child, its ``process_group`` filled in, or None (none, or
    unreadable: then nothing is known). A pid or process group that no process can have is a
    DataError naming the file and the field: a record edited by hand once gave a traceback
    (2**70, a string), the wrong cause (-7: "Invalid argument") or an endless wait (0 is the
    sweep's own group)."""
    path = folder / RUN_FILE
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict):
        return None
    if "pid" in record:
        record.setdefault("process_group", record["pid"])
    for field in ("pid", "process_group"):
        value = record.get(field)
        if not isinstance(value, int) or isinstance(value, bool) or not 0 < value <= PID_MAX:
            found = f"is {value!r}" if field in record else "is missing"
            raise DataError(
                f"{path}: {field} {found}, not a process id (a whole number from 1 to {PID_MAX:,}); this record "
                "was not written by the sweep: delete it once no lm_eval of this pair runs, and run the sweep again"
            )
    return record


def clear_record(folder: Path) -> None:
    (folder / RUN_FILE).unlink(missing_ok=True)


def group_alive(group: int) -> bool:
    """Whether any process of the process group lives (a zombie no longer counts)."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's processes: alive
    stats = (_stat(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit())
    return any(fields[2] == str(group) and fields[0] not in ("Z", "X") for fields in stats if fields)  # pgrp, state


def still_running(record: dict[str, Any]) -> bool | None:
    """True while the recorded run's process group lives here, False once it is gone or the
    record cannot prove the living process is its run (no start time), None when this
    machine cannot tell (it was started on another host)."""
    if record.get("host") != socket.gethostname():
        return None
    if record.get("boot") and record["boot"] != _boot_id():
        return False
    group = record["process_group"]
    if not group_alive(group):
        return False
    if not verifiable(record):
        return False  # a live pid it cannot be told from: waiting on it could last forever
    ticks = _start_ticks(group)  # a living leader must be the recorded process, not a reused pid
    return ticks is None or record["start_ticks"] == ticks


def verifiable(record: dict[str, Any]) -> bool:
    """Whether the record names its process by pid and start time (``start_ticks``); a record
    without one (hand-made, or older) cannot tell its run from an unrelated process that got the pid."""
    ticks = record.get("start_ticks")
    return isinstance(ticks, int) and not isinstance(ticks, bool)


def wait_until_gone(record: dict[str, Any], say: Callable[[str], None]) -> None:
    """Wait while an earlier sweep's child still runs (it may be writing its results)."""
    group = record["process_group"]
    say(
        f"lm_eval of an earlier sweep still runs (pid {record['pid']}, started {record.get('started', '?')} by sweep "
        f"pid {record.get('sweep_pid', '?')}); waiting for it to end (`kill -- -{group}` stops it)"
    )
    while still_running(record):
        time.sleep(POLL_S)
