"""GET /v1/openapi.yaml on the real binary: docs/openapi.yaml as built in,
byte for byte, without a key."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from harness import Pixrelay, Redis, Workdir  # noqa: E402

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "openapi.yaml")


class Served(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.wd = Workdir()
        cls.redis = Redis(cls.wd.path).start()
        cls.px = Pixrelay(cls.wd.path, cls.redis).start()

    @classmethod
    def tearDownClass(cls):
        cls.px.stop()
        cls.redis.stop()
        cls.wd.cleanup()

    def test_the_document_without_a_key(self):
        r = self.px.request("GET", "/v1/openapi.yaml")
        self.assertEqual(r.status, 200)
        with open(DOC, "rb") as f:
            self.assertEqual(r.body, f.read())
        self.assertEqual(r.header("Content-Type"), "application/yaml")
        self.assertEqual(r.header("Cache-Control"), "no-cache")
        self.assertTrue(r.header("X-Request-Id"))

    def test_head(self):
        r = self.px.request("HEAD", "/v1/openapi.yaml")
        self.assertEqual(r.status, 200)
        self.assertEqual(r.body, b"")
        self.assertEqual(r.header("Content-Type"), "application/yaml")

    def test_other_methods_405_envelope(self):
        r = self.px.request("POST", "/v1/openapi.yaml", body={})
        self.assertEqual(r.status, 405)
        self.assertEqual(r.header("Allow"), "GET")
        self.assertEqual(r.json["status"], 405)
        self.assertEqual(r.json["data"], [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
