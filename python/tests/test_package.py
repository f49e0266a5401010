# `pip install ./python` gives an importable normlab with the documented API, and the recording side
# imports nothing but torch (pandas is the reader's alone).
import os
import shutil
import subprocess
import sys

PYTHON_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def test_pip_install_gives_the_documented_api(tmp_path):
    source = tmp_path / "source"  # a copy: building writes egg-info next to the sources
    shutil.copytree(PYTHON_DIR, source, ignore=shutil.ignore_patterns("tests", "__pycache__", "*.egg-info", "build"))
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--target", str(tmp_path / "site"), str(source)], check=True, capture_output=True)
    probe = ("import sys; import normlab; "
             "assert normlab.__file__.startswith(sys.argv[1]), normlab.__file__; "
             "print(normlab.__version__, callable(normlab.watch), callable(normlab.load_run), "
             "callable(normlab.record_attention), 'pandas' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "site")], capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(tmp_path / "site")}, cwd=str(tmp_path), check=True)
    assert result.stdout.split() == ["0.1.0", "True", "True", "True", "False"]
