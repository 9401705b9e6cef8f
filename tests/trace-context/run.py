"""Runs the vendored W3C Trace Context harness (harness/, see README.md)
against service.mjs at STRICT_LEVEL=2 and SPEC_LEVEL=2, and fails unless
every one of its tests ran and passed.

    python tests/trace-context/run.py      (make test-trace-context)

Every wait is bounded: the service must print its `listening <url>` line
within SERVICE_START_S, the harness must finish within HARNESS_RUN_S, and
the service must stop within STOP_S of being asked (else it is killed).
"""

import hashlib
import os
import pathlib
import queue
import re
import socket
import subprocess
import sys
import threading

HERE = pathlib.Path(__file__).resolve().parent
HARNESS = HERE / "harness"
SERVICE_START_S = 30
HARNESS_RUN_S = 180
STOP_S = 5
# The harness's test count at the pinned commit (README.md): fewer would
# mean tests were skipped or lost, which must not pass.
EXPECTED_TESTS = 41

# Git blob ids of the vendored files at the pinned commit (README.md): the
# copy is checked byte for byte before it runs.
BLOBS = {
    "test.py": "35c8eadf8e8ca64d0e9d312a71bfbeacec296587",
    "client.py": "24b460c3f4832e2319aad1504872a589f1302e2a",
    "server.py": "ff8c821c8d3889d14359875c01f5102b47fc9237",
    "tracecontext/__init__.py": "01fe795f0fa1a871993341b9154a92e5b7eb89fd",
    "tracecontext/traceparent.py": "40dcdf7b80d6933b26adbb4c22f565d4db896ac9",
    "tracecontext/tracestate.py": "ed3c40e80ae06f214f7d120bb50b26f22b34a011",
}


def blob_id(path: pathlib.Path) -> str:
    data = path.read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_service() -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        ["node", str(HERE / "service.mjs")],
        stdout=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue = queue.Queue()

    def pump() -> None:
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    try:
        line = lines.get(timeout=SERVICE_START_S)
    except queue.Empty:
        stop(proc)
        sys.exit(f"service did not report listening within {SERVICE_START_S} s")
    match = re.fullmatch(r"listening (http://\S+)\n", line or "")
    if match is None:
        stop(proc)
        sys.exit(f"service did not start (printed {line!r}, exit {proc.poll()})")
    return proc, match.group(1)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=STOP_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=STOP_S)


def run_harness(url: str, port: str) -> subprocess.CompletedProcess:
    env = dict(
        os.environ,
        STRICT_LEVEL="2",
        SPEC_LEVEL="2",
        HARNESS_HOST="127.0.0.1",
        HARNESS_PORT=port,
    )
    try:
        return subprocess.run(
            [sys.executable, "test.py", url],
            check=False,
            cwd=HARNESS,
            env=env,
            capture_output=True,
            text=True,
            timeout=HARNESS_RUN_S,
        )
    except subprocess.TimeoutExpired:
        sys.exit(f"the harness did not finish within {HARNESS_RUN_S} s")


def main() -> None:
    for name, blob in BLOBS.items():
        if blob_id(HARNESS / name) != blob:
            sys.exit(f"harness/{name} is not the file of the pinned commit (README.md)")
    service, url = start_service()
    try:
        # The harness's port was free when picked, but another process may
        # bind it first: a run that could not bind gets a new one (at most 3).
        for _ in range(3):
            run = run_harness(url, str(free_port()))
            if "Address already in use" not in run.stdout + run.stderr:
                break
    finally:
        stop(service)
    out = run.stdout + run.stderr
    print(out, end="")
    ran = re.search(r"^Ran (\d+) tests? in ", out, re.MULTILINE)
    total = int(ran.group(1)) if ran else 0
    passed = run.returncode == 0 and re.search(r"^OK$", out, re.MULTILINE) is not None
    skipped = re.search(r"skipped", out) is not None
    if not passed or skipped or total != EXPECTED_TESTS:
        sys.exit(
            f"W3C Trace Context harness: {total} ran, exit {run.returncode}"
            f"{', some skipped' if skipped else ''}; expected all {EXPECTED_TESTS} to run and pass"
        )
    print("W3C Trace Context harness at STRICT_LEVEL=2, SPEC_LEVEL=2:")
    print(f"trace-context: {total} passed, 0 failed")


if __name__ == "__main__":
    main()
