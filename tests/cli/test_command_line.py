"""The command line: --version, --help, and clean errors."""
import subprocess
import sys


def run(*args):
    return subprocess.run([sys.executable, "-m", "verigrad.cli", *args], capture_output=True, text=True)


def test_version_and_help():
    r = run("--version")
    assert r.returncode == 0 and r.stdout.startswith("verigrad ")
    r = run("--help")
    assert r.returncode == 0 and "usage: verigrad" in r.stdout


def test_unknown_command_is_an_argument_error_without_traceback():
    r = run("no-such-command")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "Traceback" not in r.stderr and "invalid choice" in r.stderr


def test_bad_input_from_a_subcommand_is_one_line_when_run_as_module(tmp_path):
    """``python -m verigrad.cli`` loads the CLI as __main__: UsageError must still be
    caught (one class, in verigrad.errors)."""
    r = run("certify", str(tmp_path / "missing.py") + ":f", "--shape", "x=n")
    assert r.returncode == 3
    assert "Traceback" not in r.stderr and r.stderr.count("\n") == 1


def test_python_dash_m_verigrad_is_the_command(tmp_path):
    """``python -m verigrad`` (no scripts folder on the PATH) runs the same command, with
    its exit codes: 0 for --version, 3 and one line for a missing file."""
    r = subprocess.run([sys.executable, "-m", "verigrad", "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("verigrad ")
    r = subprocess.run([sys.executable, "-m", "verigrad", "certify", str(tmp_path / "missing.py") + ":f",
                        "--shape", "x=n"], capture_output=True, text=True)
    assert r.returncode == 3 and "Traceback" not in r.stderr and "no such file" in r.stderr
