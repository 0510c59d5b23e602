"""The dashboard's files over HTTP: every file of dashboard/ served as it is,
with the security headers, ETag revalidation, and nothing else served."""
import os
import re
import unittest

from harness import start_stack, stop_stack

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "dashboard")
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; "
       "frame-ancestors 'none'; require-trusted-types-for 'script'; trusted-types 'none'")
TYPES = {".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8",
         ".js": "text/javascript; charset=utf-8", ".svg": "image/svg+xml"}


class DashboardHttp(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        start_stack(cls)

    @classmethod
    def tearDownClass(cls):
        stop_stack(cls)

    def assertSecure(self, r):
        self.assertEqual(r.header("Content-Security-Policy"), CSP)
        self.assertEqual(r.header("X-Frame-Options"), "DENY")
        self.assertEqual(r.header("X-Content-Type-Options"), "nosniff")
        self.assertEqual(r.header("Referrer-Policy"), "no-referrer")
        self.assertEqual(r.header("Cross-Origin-Opener-Policy"), "same-origin")
        self.assertEqual(r.header("Cross-Origin-Resource-Policy"), "same-origin")

    def test_every_file_is_served_as_it_is(self):
        names = sorted(os.listdir(SRC))
        self.assertIn("index.html", names)
        etags = set()
        for name in names:
            with self.subTest(name=name):
                with open(os.path.join(SRC, name), "rb") as f:
                    want = f.read()
                r = self.px.request("GET", "/dashboard/" + name)
                self.assertEqual(r.status, 200, r)
                self.assertEqual(r.body, want)
                self.assertEqual(r.header("Content-Type"), TYPES[os.path.splitext(name)[1]])
                self.assertEqual(r.header("Cache-Control"), "no-cache")
                self.assertRegex(r.header("ETag"), r'^"[0-9a-f]{20}"$')
                etags.add(r.header("ETag"))
                self.assertSecure(r)
        self.assertEqual(len(etags), len(names))

    def test_the_page_and_the_redirect(self):
        r = self.px.request("GET", "/dashboard")
        self.assertEqual((r.status, r.header("Location")), (308, "dashboard/"))
        self.assertSecure(r)
        r = self.px.request("GET", "/dashboard/")
        self.assertEqual(r.status, 200)
        with open(os.path.join(SRC, "index.html"), "rb") as f:
            self.assertEqual(r.body, f.read())
        self.assertSecure(r)
        r = self.px.request("HEAD", "/dashboard/")
        self.assertEqual((r.status, r.body), (200, b""))

    def test_nothing_inline(self):
        # what the CSP forbids is not in the files either: no inline script,
        # style or event handler, nothing loaded from elsewhere
        for name in os.listdir(SRC):
            with open(os.path.join(SRC, name), encoding="utf-8") as f:
                text = f.read()
            if name.endswith(".html"):
                for tag in re.findall(r"<script\b[^>]*>", text):
                    self.assertIn(" src=", tag, name)
                self.assertNotRegex(text, r"<style\b|\sstyle=|\son[a-z]+=", name)
            self.assertNotRegex(text, r"https?://(?!www\.w3\.org/2000/svg)", name)
            if name.endswith(".js"):
                self.assertNotRegex(text, r"\.innerHTML|\.outerHTML|insertAdjacentHTML|eval\(|"
                                          r"new Function|document\.write|localStorage\.setItem", name)

    def test_revalidation(self):
        r = self.px.request("GET", "/dashboard/app.js")
        etag = r.header("ETag")
        for inm in (etag, "W/" + etag, '"other", ' + etag, "*"):
            with self.subTest(inm=inm):
                r = self.px.request("GET", "/dashboard/app.js", headers={"If-None-Match": inm})
                self.assertEqual((r.status, r.body, r.header("ETag")), (304, b"", etag))
                self.assertSecure(r)
        r = self.px.request("GET", "/dashboard/app.js", headers={"If-None-Match": '"other"'})
        self.assertEqual(r.status, 200)

    def test_nothing_else_is_served(self):
        # a NUL byte never gets past the HTTP server
        r = self.px.request("GET", "/dashboard/index.html%00.js")
        self.assertEqual((r.status, r.json["error"]), (400, "%00 (NUL) in the request target"))
        for path in ("/dashboard/nope.js", "/dashboard/..", "/dashboard/.%2e",
                     "/dashboard/%2e%2e%2fmeson.build"):
            with self.subTest(path=path):
                r = self.px.request("GET", path)
                self.assertEqual(r.status, 404, r)
                self.assertSecure(r)
                self.assertTrue(r.json["error"].startswith("no such dashboard file: "), r)
        for path in ("/dashboard/x/app.js", "/dashboard//app.js"):
            r = self.px.request("GET", path)
            self.assertEqual((r.status, r.json["error"]), (404, "no such endpoint: GET " + path))
        r = self.px.request("POST", "/dashboard/", body={})
        self.assertEqual((r.status, r.header("Allow")), (405, "GET"))
        r = self.px.request("DELETE", "/dashboard/app.js")
        self.assertEqual(r.status, 405)


if __name__ == "__main__":
    unittest.main()
