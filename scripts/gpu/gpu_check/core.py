"""The check's machinery: the budget, time-boxed steps, the summary, and the dry run.

Check holds what every part shares (the folders, the budget, the summary) and runs every
command: `step` time-boxed with its log in $W/logs/NAME.log and a verdict line in the summary,
`run` and `capture` without a box (as the bash ran them). Under the dry run none of them runs
anything: each prints the command it would run, and files are neither read back nor written."""

import contextlib
import glob
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import traceback

MARGIN = 15  # seconds every step leaves to what follows it
SHORTEST = 5  # a box shorter than this is not started: SKIPPED (out of time)
KILL_AFTER = 5  # timeout -k 5: SIGKILL this long after SIGTERM
DEFAULT_PARTS = "tests kernels bench sanitizer"


def now():
    return int(time.time())


def emit(text):
    """print, flushed; when our stdout is gone (`| head`) the check goes on writing its summary,
    as the bash script's `tee` did, with stdout (ours and the commands') sent to /dev/null."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def signal_rc(rc):
    """A child's status as bash reports it: 128 + N for a child ended by signal N."""
    return 128 - rc if rc < 0 else rc


def kill_group(proc, sig):
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def not_started(cmd, exc, out):
    """timeout's own answer when the command cannot start: 127 not found, 126 not runnable."""
    rc = 127 if isinstance(exc, FileNotFoundError) else 126
    why = exc.strerror or str(exc)
    message = f"timeout: failed to run command '{cmd[0]}': {why}\n"
    if out is not None and hasattr(out, "write"):
        out.write(message)
    else:
        sys.stderr.write(message)
    return rc


def spawn(cmd, limit=None, kill_after=KILL_AFTER, stdout=None, stderr=None, env=None):
    """Runs cmd to its end; with a limit, as GNU `timeout [-k KILL_AFTER] LIMIT cmd` does: in its
    own process group, SIGTERM to the group at the limit (status 124), SIGKILL KILL_AFTER later
    if it is still there (status 137; kill_after None: no SIGKILL). Limit 0: no limit."""
    if limit is not None and limit < 0:
        sys.stderr.write(f"timeout: invalid time interval '{limit}'\n")
        return 125
    boxed = limit is not None
    try:
        proc = subprocess.Popen(cmd, stdout=stdout, stderr=stderr, env=env,
                                start_new_session=boxed)
    except OSError as exc:
        return not_started(cmd, exc, stdout)
    try:
        return signal_rc(proc.wait(timeout=limit or None))
    except subprocess.TimeoutExpired:
        kill_group(proc, signal.SIGTERM)
        try:
            proc.wait(timeout=kill_after)
            return 124
        except subprocess.TimeoutExpired:
            kill_group(proc, signal.SIGKILL)
            proc.wait()
            return 137
    except BaseException:  # interrupted (SIGTERM, Ctrl-C): the child goes too
        if boxed:
            kill_group(proc, signal.SIGKILL)
        else:
            proc.kill()
        proc.wait()
        raise


def verdict(rc, limit):
    if rc in (124, 137):
        return f"TIMED OUT after {limit}s"
    return "ok" if rc == 0 else f"FAILED rc={rc}"


def text_lines(text):
    """Lines as grep, tail and sed see them: split at newlines only, no empty last line."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def grep_lines(lines, pattern):
    return [line for line in lines if re.search(pattern, line)]


def grep_after(lines, pattern, after):
    """grep -A AFTER: each matching line and the AFTER lines after it, '--' between groups."""
    keep = set()
    for i, line in enumerate(lines):
        if re.search(pattern, line):
            keep.update(range(i, min(i + after + 1, len(lines))))
    out, prev = [], None
    for i in sorted(keep):
        if prev is not None and i > prev + 1:
            out.append("--")
        out.append(lines[i])
        prev = i
    return out


def from_first(lines, prefix):
    """sed -n '/^PREFIX/,$p': from the first line starting with PREFIX to the end."""
    for i, line in enumerate(lines):
        if line.startswith(prefix):
            return lines[i:]
    return []


def words_joined(lines):
    """`... | tr '\\n' ' '` inside $(...): every line followed by one space."""
    return "".join(line + " " for line in lines)


def nproc():
    return len(os.sched_getaffinity(0))


def env_or(name, default):
    """${NAME:-default}: the variable, or default when it is unset or empty."""
    return os.environ.get(name) or default


def glob_args(pattern):
    """A bash glob as an argument list: the sorted matches, or the pattern itself when none."""
    return sorted(glob.glob(pattern)) or [pattern]


def is_exec(path):
    return os.path.exists(path) and os.access(path, os.X_OK)


class Check:
    """The folders, the budget, the summary; every command of every part runs through here."""

    def __init__(self, root, dry=False):
        self.root = str(root)
        self.dry = dry
        self.start = now()
        self.budget = int(env_or("BUDGET", "540"))  # seconds for the whole check
        self.parts = env_or("PARTS", DEFAULT_PARTS).split()
        self.out = env_or("OUT", "/tmp/gpu-check-out")
        self.work = env_or("WORK", "/tmp/gpu-check")  # logs (logs.tar.gz), the benchmark's files
        self.gpu = env_or("GPU_DIR", f"{self.root}/.gpu")
        self.logs = f"{self.work}/logs"
        self.summary = f"{self.out}/summary.txt"
        self.loadplan = f"{self.gpu}/bin/loadplan"
        # An earlier commit's loadplan, packed with BEFORE=path scripts/gpu/gpu-pack, run beside
        # this one by the parts that compare (bench, ranks); None when none was packed.
        before = f"{self.gpu}/bin/loadplan-before"
        self.before = before if is_exec(before) else None

    # -- the budget and the summary

    def left(self):
        return self.budget - (now() - self.start)

    def say(self, *lines):
        """echo LINE | tee -a $SUMMARY (the dry run prints only)."""
        for line in lines:
            emit(line)
            if not self.dry:
                with open(self.summary, "a") as f:
                    f.write(line + "\n")

    def tee(self, lines, prefix=""):
        self.say(*(prefix + line for line in lines))

    def log(self, name):
        return f"{self.logs}/{name}.log"

    # -- commands

    def show(self, cmd, env=None, redirect="", what=""):
        words = [f"{k}={shlex.quote(v)}" for k, v in (env or {}).items()] + [shlex.join(cmd)]
        emit(f"[dry-run] {what}{' '.join(words)}{redirect}")

    def child_env(self, env):
        return {**os.environ, **env} if env else None

    def step(self, name, limit, cmd, env=None):
        """step NAME SECONDS CMD: CMD time-boxed (never past the budget: what is left less
        MARGIN), its output in $W/logs/NAME.log, a verdict line in the summary; CMD's status."""
        cmd = [str(x) for x in cmd]
        limit = min(limit, self.left() - MARGIN)
        if limit < SHORTEST:
            self.say(f"{name}: SKIPPED (out of time)")
            return 124
        if self.dry:
            self.show(cmd, env, f" >{self.log(name)} 2>&1", f"step {name} ({limit} s): ")
            return 0
        t0 = now()
        with open(self.log(name), "w") as out:
            rc = spawn(cmd, limit, stdout=out, stderr=subprocess.STDOUT, env=self.child_env(env))
        self.say(f"{name}: {verdict(rc, limit)} ({now() - t0} s)")
        return rc

    def run(self, cmd, stdout=None, append=False, stderr=None, env=None, limit=None,
            kill_after=KILL_AFTER):
        """One command without the step's summary line. stdout: a file (appended to with
        append), "null", or ours; stderr: "out" (with stdout: 2>&1), "null", or ours. With a
        limit: `timeout [-k KILL_AFTER] LIMIT CMD`. Returns its status."""
        cmd = [str(x) for x in cmd]
        if self.dry:
            self.show(cmd, env, redirection(stdout, append, stderr), box(limit, kill_after))
            return 0
        with contextlib.ExitStack() as stack:
            out = open_stream(stack, stdout, append)
            err = subprocess.STDOUT if stderr == "out" else open_stream(stack, stderr, False)
            return spawn(cmd, limit, kill_after, out, err, self.child_env(env))

    def timed(self, cmd, **kwargs):
        """run, with the wall-clock times (Unix seconds) just before and just after it."""
        t0 = time.time()
        self.run(cmd, **kwargs)
        return t0, time.time()

    def capture(self, cmd, stderr=None, dry=""):
        """$(CMD): its standard output (with stderr "out": 2>&1; "null": 2>/dev/null)."""
        cmd = [str(x) for x in cmd]
        if self.dry:
            self.show(cmd, None, " | ...")
            return dry
        err = {"out": subprocess.STDOUT, "null": subprocess.DEVNULL}.get(stderr)
        try:
            done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=err)
        except OSError:
            message = f"{cmd[0]}: command not found\n"
            if stderr == "out":
                return message
            if stderr != "null":
                sys.stderr.write(message)
            return ""
        return done.stdout.decode(errors="replace")

    # -- in-process reports (what the bash ran as `python3 -` helpers)

    def report(self, func, *args, to=None, errors_to_summary=False):
        """The lines func(*args) yields: to the summary, or appended to the file `to`. An error
        prints its traceback (and, where the bash sent stderr to the summary, its last line)."""
        if self.dry:
            emit(f"[dry-run] report {func.__name__}")
            return
        try:
            for line in func(*args):
                if to:
                    self.append(to, [line])
                else:
                    self.say(line)
        except Exception as exc:
            traceback.print_exc()
            if errors_to_summary:
                self.say(traceback.format_exception_only(type(exc), exc)[-1].rstrip("\n"))

    def value(self, func, *args, default=None):
        """func(*args), or default (after the traceback) when it fails or under the dry run."""
        if self.dry:
            return default
        try:
            return func(*args)
        except Exception:
            traceback.print_exc()
            return default

    # -- files (nothing is read back or written under the dry run)

    def lines(self, path):
        """The file's lines; none when it is missing (grep and tail say so on stderr only)."""
        if self.dry:
            return []
        try:
            with open(path, errors="replace") as f:
                return text_lines(f.read())
        except OSError as exc:
            sys.stderr.write(f"gpu-check: {path}: {exc.strerror}\n")
            return []

    def grep(self, path, pattern):
        return grep_lines(self.lines(path), pattern)

    def tail(self, path, n):
        return self.lines(path)[-n:]

    def from_first(self, path, prefix):
        return from_first(self.lines(path), prefix)

    def made(self, path):
        """A file an earlier step makes: there, or assumed there under the dry run."""
        return self.dry or os.path.isfile(path)

    def made_any(self, pattern):
        return self.dry or bool(glob.glob(pattern))

    def mkdir(self, *paths):
        for path in paths:
            if not self.dry:
                os.makedirs(path, exist_ok=True)

    def remove(self, *paths):
        """rm -rf PATHS."""
        if self.dry:
            emit(f"[dry-run] rm -rf {shlex.join(paths)}")
            return
        for path in paths:
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            elif os.path.lexists(path):
                with contextlib.suppress(OSError):
                    os.unlink(path)

    def write(self, path, text):
        if not self.dry:
            with open(path, "w") as f:
                f.write(text)

    def append(self, path, lines):
        """>>PATH: the lines appended (the file made even when there are none)."""
        if not self.dry:
            with open(path, "a") as f:
                f.write("".join(line + "\n" for line in lines))

    def touch(self, path):
        if not self.dry:
            with open(path, "a"):
                pass

    @contextlib.contextmanager
    def environ(self, **values):
        """`local -x NAME=VALUE` for one part: set for every command run inside, then restored."""
        saved = {name: os.environ.get(name) for name in values}
        os.environ.update(values)
        try:
            yield
        finally:
            for name, old in saved.items():
                if old is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = old


def box(limit, kill_after):
    """How the dry run shows a time box: `timeout [-k KILL_AFTER] LIMIT `."""
    if limit is None:
        return ""
    return "timeout " + ("" if kill_after is None else f"-k {kill_after} ") + f"{limit} "


def flags(flag, values):
    """FLAG V1 FLAG V2 ...: a flag before each value."""
    return [arg for value in values for arg in (flag, value)]


def open_stream(stack, target, append):
    if target is None:
        return None
    if target == "null":
        return subprocess.DEVNULL
    return stack.enter_context(open(target, "a" if append else "w"))


def redirection(stdout, append, stderr):
    text = {None: "", "null": " >/dev/null"}.get(stdout, f" {'>>' if append else '>'}{stdout}")
    return text + {None: "", "null": " 2>/dev/null", "out": " 2>&1"}[stderr]
