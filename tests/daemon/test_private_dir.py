"""daemon/private_dir.py: the runtime directory and the daemon's files like sshd's StrictModes (issue 33,
finding 4: with an attacker-owned /tmp/snarkd-UID the daemon followed a planted log link, appended to a
root-owned file and chmodded it 0600)."""

from __future__ import annotations

import logging
import os
import stat

import pytest

from snarkd.daemon import private_dir
from snarkd.daemon.logsetup import private_file, setup_logging
from snarkd.daemon.pidfile import PidFile
from snarkd.errors import DaemonError

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a directory of another user")


def test_a_missing_directory_is_made_0700_and_checked(tmp_path):
    d = private_dir.ensure_dir(tmp_path / "a" / "run", strict=True)
    assert stat.S_IMODE(os.stat(d).st_mode) == 0o700
    private_dir.ensure_dir(d, strict=True)  # every start: checked again


def test_the_users_own_runtime_dir_of_another_mode_is_tightened_to_0700(tmp_path):
    d = tmp_path / "run"
    d.mkdir()
    d.chmod(0o755)  # as an older snarkd made it under umask 022
    private_dir.ensure_dir(d, strict=True)
    assert stat.S_IMODE(os.stat(d).st_mode) == 0o700


@pytest.mark.parametrize("mode, strict, why", [(0o777, False, "writable by others"), (0o775, False, "writable by others")])
def test_a_directory_others_can_write_or_read_is_refused_with_the_fix(tmp_path, mode, strict, why):
    d = tmp_path / "run"
    d.mkdir()
    d.chmod(mode)
    with pytest.raises(DaemonError, match=why) as e:
        private_dir.ensure_dir(d, strict=strict)
    assert "Fix: remove it" in str(e.value) and str(d) in str(e.value)


def test_a_link_as_the_directory_is_refused(tmp_path):
    (tmp_path / "real").mkdir(mode=0o700)
    (tmp_path / "run").symlink_to(tmp_path / "real")
    with pytest.raises(DaemonError, match="a symbolic link"):
        private_dir.ensure_dir(tmp_path / "run")


@root_only
def test_an_attacker_owned_runtime_dir_with_a_planted_log_link_is_refused(tmp_path):
    """The repro: the runtime dir owned by uid 20002, its log a link to a root-owned file. Refused before
    anything is opened: the target is neither appended to nor chmodded."""
    victim = tmp_path / "victim"
    victim.write_text("root's\n")
    victim.chmod(0o644)
    run = tmp_path / "snarkd-0"
    run.mkdir(mode=0o700)
    (run / "snarkd.log").symlink_to(victim)
    os.chown(run, 20002, 20002)
    for open_it in (lambda: private_file(run / "snarkd.log"), lambda: setup_logging(str(run / "snarkd.log")),
                    lambda: PidFile(run / "snarkd.pid").acquire({})):
        with pytest.raises(DaemonError, match="owned by uid 20002"):
            open_it()
    assert victim.read_text() == "root's\n" and stat.S_IMODE(victim.stat().st_mode) == 0o644
    logging.getLogger("snarkd").handlers.clear()


def test_a_planted_log_link_in_a_good_directory_is_not_followed(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("x\n")
    victim.chmod(0o644)
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    (run / "snarkd.log").symlink_to(victim)
    with pytest.raises(DaemonError, match="symbolic link"):
        setup_logging(str(run / "snarkd.log"))
    with pytest.raises(DaemonError, match="symbolic link"):
        PidFile(run / "snarkd.log").acquire({})
    assert victim.read_text() == "x\n" and stat.S_IMODE(victim.stat().st_mode) == 0o644
    logging.getLogger("snarkd").handlers.clear()


@root_only
def test_a_file_of_another_user_is_refused(tmp_path):
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    (run / "snarkd.log").write_text("")
    os.chown(run / "snarkd.log", 20002, 20002)
    with pytest.raises(DaemonError, match="owned by uid 20002"):
        private_file(run / "snarkd.log")
