"""artifacts: directories published as versions behind a link, files renamed
into place; what is left behind after successes and failures."""

import contextlib
import os

import pytest

from jax2tf.deploy import artifacts


def _writer(files):
  def write(folder):
    for name, text in files.items():
      with open(os.path.join(folder, name), "w") as f:
        f.write(text)

  return write


def _contents(path):
  return {n: open(os.path.join(path, n)).read() for n in sorted(os.listdir(path))}


def _versions(path):
  return sorted(os.listdir(artifacts.versions_folder(path)))


def test_a_new_directory_is_plain_and_a_replacement_a_link(tmp_path):
  path = tmp_path / "model"
  artifacts.write_directory_atomically(path, _writer({"a": "1", "b": "1"}))
  assert not os.path.islink(path) and _contents(path) == {"a": "1", "b": "1"}
  assert os.listdir(tmp_path) == ["model"]
  with pytest.raises(FileExistsError, match="pass overwrite"):
    artifacts.write_directory_atomically(path, _writer({"a": "2"}))
  assert _contents(path) == {"a": "1", "b": "1"}
  artifacts.write_directory_atomically(path, _writer({"a": "3"}), overwrite=True)
  assert os.path.islink(path) and _contents(path) == {"a": "3"}
  # The link is relative, so the parent folder can be moved or copied whole.
  assert not os.path.isabs(os.readlink(path))
  assert sorted(os.listdir(tmp_path)) == [".model.versions", "model"]


@pytest.mark.skipif(artifacts.fcntl is None, reason="writers take turns by fcntl locks")
def test_a_path_created_meanwhile_is_replaced_though_another_writer_is_linking_it(
  tmp_path, monkeypatch
):
  """Another writer creates the path while this one writes; when this one's
  rename fails, a third writer takes the lock and swaps the plain directory
  for a link, so the path is missing until it is done. The failed rename is
  judged under the lock, where the path exists, and this writer replaces it."""
  path = tmp_path / "model"
  aside = tmp_path / "aside"
  real_locked = artifacts._locked
  turns = []

  @contextlib.contextmanager
  def locked(folder):
    if aside.exists():  # the third writer's link is in place by the next turn
      os.replace(aside, path)
    with real_locked(folder):
      yield
    turns.append(folder)
    if len(turns) == 1:  # the third writer, mid-switch, right after this turn
      os.replace(path, aside)

  def write(folder):
    _writer({"a": "mine"})(folder)
    os.makedirs(path)  # the other writer, meanwhile
    _writer({"a": "theirs"})(path)

  monkeypatch.setattr(artifacts, "_locked", locked)
  artifacts.write_directory_atomically(path, write, overwrite=True)
  assert _contents(path) == {"a": "mine"}
  assert os.path.islink(path) and not aside.exists()


def test_replacing_keeps_the_previous_version_only(tmp_path):
  path = tmp_path / "model"
  artifacts.write_directory_atomically(path, _writer({"k": "first"}))
  resolved = []
  for k in range(4):
    artifacts.write_directory_atomically(path, _writer({"k": str(k)}), overwrite=True)
    assert _contents(path) == {"k": str(k)}
    resolved.append(os.path.realpath(path))
  assert len(set(resolved)) == 4
  # A reader that resolved the link before the last write can still finish.
  assert _versions(path) == sorted(os.path.basename(r) for r in resolved[-2:])
  assert _contents(resolved[-2]) == {"k": "2"}
  assert not os.path.exists(resolved[0])


def test_a_failed_write_leaves_everything_as_it_was(tmp_path):
  def fails(folder):
    _writer({"half": "x"})(folder)
    raise RuntimeError("disk full")

  with pytest.raises(RuntimeError, match="disk full"):
    artifacts.write_directory_atomically(tmp_path / "new", fails)
  assert os.listdir(tmp_path) == []
  path = tmp_path / "model"
  for k in range(2):
    artifacts.write_directory_atomically(path, _writer({"k": str(k)}), overwrite=True)
  before = (os.readlink(path), _versions(path))
  with pytest.raises(RuntimeError, match="disk full"):
    artifacts.write_directory_atomically(path, fails, overwrite=True)
  assert (os.readlink(path), _versions(path)) == before
  assert _contents(path) == {"k": "1"}
  assert sorted(os.listdir(tmp_path)) == [".model.versions", "model"]


def test_a_plain_directory_is_replaced_by_a_link(tmp_path):
  path = tmp_path / "model"
  path.mkdir()
  (path / "old").write_text("plain")
  artifacts.write_directory_atomically(path, _writer({"k": "1"}), overwrite=True)
  assert os.path.islink(path) and _contents(path) == {"k": "1"}
  # The plain directory is the previous version until the next write.
  (plain,) = [v for v in _versions(path) if v.startswith("v-plain-")]
  assert _contents(os.path.join(artifacts.versions_folder(path), plain)) == {"old": "plain"}
  artifacts.write_directory_atomically(path, _writer({"k": "2"}), overwrite=True)
  assert plain not in _versions(path) and len(_versions(path)) == 2


def test_a_link_of_someone_else_is_replaced_and_its_target_kept(tmp_path):
  elsewhere = tmp_path / "elsewhere"
  elsewhere.mkdir()
  (elsewhere / "mine").write_text("keep")
  path = tmp_path / "model"
  os.symlink(elsewhere, path)
  artifacts.write_directory_atomically(path, _writer({"k": "1"}), overwrite=True)
  assert _contents(path) == {"k": "1"} and _contents(elsewhere) == {"mine": "keep"}
  assert len(_versions(path)) == 1


def test_file_write_replaces_whole_and_leaves_no_temporary(tmp_path):
  path = tmp_path / "model.tflite"
  artifacts.write_atomically(path, b"one")
  artifacts.write_atomically(path, b"two")
  assert path.read_bytes() == b"two" and os.listdir(tmp_path) == ["model.tflite"]
  with pytest.raises(FileNotFoundError, match="does not exist"):
    artifacts.write_atomically(tmp_path / "missing" / "m.tflite", b"x")


def test_without_links_a_plain_directory_is_replaced(tmp_path, monkeypatch):
  def refuse(*args, **kwargs):
    raise OSError(1, "Operation not permitted")

  monkeypatch.setattr(os, "symlink", refuse)
  path = tmp_path / "model"
  for k in range(2):
    artifacts.write_directory_atomically(path, _writer({"k": str(k)}), overwrite=True)
    assert not os.path.islink(path) and _contents(path) == {"k": str(k)}
  assert os.listdir(tmp_path) == ["model"]
