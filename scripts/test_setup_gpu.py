"""Tests of scripts/setup_gpu.sh against fake npm tarballs (no download).

The real packages are ~290 MB, too heavy for every CI run; these check the
script's logic: files taken and checked, temp + rename into one folder, a
second run doing nothing, and every failure (bad tarball, bad member, no
tarball, no npm) reported with nothing installed.
"""

import hashlib
import io
import os
import subprocess
import tarfile
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "setup_gpu.sh")
CORE = "package/bin/napi-v6/linux/x64/libonnxruntime.so.1"
CUDA = "package/Plugins/Linux/x64/libonnxruntime_providers_cuda.so"
SHARED = "package/Plugins/Linux/x64/libonnxruntime_providers_shared.so"


def sha(b):
    return hashlib.sha256(b).hexdigest()


def tgz(path, members):
    with tarfile.open(path, "w:gz") as t:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    with open(path, "rb") as f:
        return sha(f.read())


class SetupGPUTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.tmp.name
        self.tars, self.cache = os.path.join(d, "tars"), os.path.join(d, "cache")
        os.makedirs(self.tars)
        self.files = {CORE: b"core", CUDA: b"cuda provider", SHARED: b"shared provider"}
        self.env = dict(os.environ, RERANKD_CACHE=self.cache, RERANKD_GPU_TARBALLS=self.tars,
                        RERANKD_GPU_CORE_SHA256=sha(self.files[CORE]),
                        RERANKD_GPU_CUDA_SHA256=sha(self.files[CUDA]),
                        RERANKD_GPU_SHARED_SHA256=sha(self.files[SHARED]))
        self.write_tars(self.files)
        self.dir = os.path.join(self.cache, "onnxruntime-gpu", "1.29.0")

    def write_tars(self, files):
        self.env["RERANKD_GPU_CORE_TGZ_SHA256"] = tgz(
            os.path.join(self.tars, "onnxruntime-node-1.29.0.tgz"), {CORE: files[CORE]})
        self.env["RERANKD_GPU_CUDA_TGZ_SHA256"] = tgz(
            os.path.join(self.tars, "com.github.asus4.onnxruntime.linux-x64-gpu-0.4.9.tgz"),
            {CUDA: files[CUDA], SHARED: files[SHARED]})

    def tearDown(self):
        self.tmp.cleanup()

    def run_setup(self, env=None):
        return subprocess.run(["bash", SCRIPT], env=env or self.env, capture_output=True, text=True)

    def test_installs_then_does_nothing(self):
        r = self.run_setup()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("ORT_GPU_LIB=" + os.path.join(self.dir, "libonnxruntime.so.1"), r.stdout)
        for member, name in ((CORE, "libonnxruntime.so.1"), (CUDA, "libonnxruntime_providers_cuda.so"),
                             (SHARED, "libonnxruntime_providers_shared.so")):
            with open(os.path.join(self.dir, name), "rb") as f:
                self.assertEqual(f.read(), self.files[member], name)
        self.assertEqual(sorted(os.listdir(self.dir)), ["libonnxruntime.so.1", "libonnxruntime_providers_cuda.so",
                                                        "libonnxruntime_providers_shared.so"])
        self.assertEqual([n for n in os.listdir(self.cache) if n.startswith(".dl")], [], "temp folder left behind")
        # second run: nothing fetched (the tarballs are gone) and nothing rewritten
        os.remove(os.path.join(self.tars, "onnxruntime-node-1.29.0.tgz"))
        r = self.run_setup()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("installed", r.stderr)

    def test_bad_tarball_installs_nothing(self):
        env = dict(self.env, RERANKD_GPU_CUDA_TGZ_SHA256="0" * 64)
        r = self.run_setup(env)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("checksum mismatch for com.github.asus4.onnxruntime.linux-x64-gpu-0.4.9.tgz", r.stderr)
        self.assertFalse(os.path.exists(self.dir))

    def test_bad_member_installs_nothing(self):
        self.write_tars(dict(self.files, **{SHARED: b"tampered"}))
        r = self.run_setup()
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("checksum mismatch for " + SHARED, r.stderr)
        self.assertFalse(os.path.exists(self.dir))

    def test_missing_tarball(self):
        os.remove(os.path.join(self.tars, "onnxruntime-node-1.29.0.tgz"))
        r = self.run_setup()
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("has no onnxruntime-node-1.29.0.tgz", r.stderr)

    def test_no_npm_says_what_to_do(self):
        env = dict(self.env, PATH="/usr/bin:/bin")  # coreutils and tar, usually no npm
        env.pop("RERANKD_GPU_TARBALLS")
        if subprocess.run(["bash", "-c", "command -v npm"], env=env, capture_output=True).returncode == 0:
            self.skipTest("npm is in /usr/bin here")
        r = self.run_setup(env)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("npm is needed", r.stderr)
        self.assertIn("RERANKD_GPU_TARBALLS", r.stderr)


if __name__ == "__main__":
    unittest.main()
