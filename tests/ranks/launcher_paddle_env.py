"""A rank under the launcher that checks what paddle's scripts rely on: its ``__file__`` is
absolute, as under ``python script.py`` and paddle's launcher, so it finds its own file after
changing directory; it prints what the launcher told it."""
import os
import sys

here = os.path.dirname(__file__)
os.chdir("/")
with open(os.path.join(here, os.path.basename(__file__))) as f:
    assert "launcher_paddle_env" in f.read()
print(f"OK rank={os.environ['PADDLE_TRAINER_ID']} of={os.environ['PADDLE_TRAINERS_NUM']} "
      f"file_absolute={os.path.isabs(__file__)} argv0={sys.argv[0]} "
      f"backend={os.environ.get('PADDLE_DISTRI_BACKEND')} level={os.environ.get('PYCOLL_LOG_LEVEL')}",
      flush=True)
