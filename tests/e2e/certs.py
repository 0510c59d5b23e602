"""Certificates for the mutual-TLS tests, made with the openssl command line
(OpenSSL 3.0, Debian bookworm) in a directory the test owns: no network, EC
P-256 keys, a few milliseconds each.

    ca = make_ca(d, "Test Bank CA")              CA(name, cert, key)
    srv = make_server(d, ca)                     127.0.0.1 and localhost
    cli = make_client(d, ca, "bank")             extendedKeyUsage clientAuth
    cli = make_client(d, ca, "bank", subject="/C=BR/O=Bank/CN=webhook.bank.example")
    old = make_expired_client(d, ca)             expired yesterday
    alien = make_foreign_client(d)               signed by a CA of its own
    ok, out = openssl_verify(ca.cert, cli.cert, purpose="sslclient")

Every function returns paths (PEM): a Cert(cert, key) or a CA(name, cert,
key); files are named after `name` inside `directory` and an existing file
of that name is replaced. A failing openssl raises CertError with its
command and output. The configuration is written beside the files, so the
system's openssl.cnf plays no part.
"""
import base64
import collections
import datetime
import hashlib
import os
import secrets
import shutil
import subprocess
import tempfile

OPENSSL = shutil.which("openssl") or "/usr/bin/openssl"

CA = collections.namedtuple("CA", "name cert key")
Cert = collections.namedtuple("Cert", "cert key")


class CertError(RuntimeError):
    """An openssl command failed."""


_CNF = """\
# written by tests/e2e/certs.py
[ req ]
distinguished_name = dn
prompt = no
[ dn ]
CN = unused
[ v3_ca ]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
[ ca ]
default_ca = test_ca
[ test_ca ]
database = %(db)s/index.txt
serial = %(db)s/serial
new_certs_dir = %(db)s
default_md = sha256
policy = any_name
unique_subject = no
copy_extensions = none
[ any_name ]
commonName = supplied
"""

_LEAF = """\
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = %(eku)s
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
%(san)s
"""


def _run(*args):
    p = subprocess.run([OPENSSL] + list(args), capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise CertError("openssl %s failed (%d): %s" % (" ".join(args), p.returncode,
                                                          (p.stderr + p.stdout).strip()))
    return p.stdout


def _paths(directory, name):
    os.makedirs(directory, exist_ok=True)
    return os.path.join(directory, name + ".pem"), os.path.join(directory, name + ".key")


def _config(directory, db="."):
    path = os.path.join(directory, "openssl-test.cnf")
    with open(path, "w") as f:
        f.write(_CNF % {"db": db})
    return path


def _extfile(directory, name, eku, hosts=()):
    san = []
    for h in hosts:
        kind = "IP" if h.replace(".", "").isdigit() or ":" in h else "DNS"
        san.append("%s:%s" % (kind, h))
    path = os.path.join(directory, name + ".ext")
    with open(path, "w") as f:
        f.write(_LEAF % {"eku": eku, "san": "subjectAltName = " + ", ".join(san) if san else ""})
    return path


def _request(directory, name, cn, subject=None):
    """A new P-256 key (name.key, mode 0600) and its CSR (returned path), for
    the subject CN=cn, or `subject` in openssl's -subj form when given."""
    cert, key = _paths(directory, name)
    csr = os.path.join(directory, name + ".csr")
    _run("req", "-new", "-config", _config(directory), "-newkey", "ec", "-pkeyopt",
         "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", csr, "-subj",
         subject or "/CN=" + cn, "-utf8")
    os.chmod(key, 0o600)
    return csr


def make_ca(directory, name="ca", cn=None, days=3650):
    """A self-signed CA (name.pem, name.key) with the subject CN=cn (name by
    default), valid from now for `days`."""
    cert, key = _paths(directory, name)
    _run("req", "-x509", "-new", "-config", _config(directory), "-extensions", "v3_ca",
         "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key,
         "-out", cert, "-subj", "/CN=" + (cn or name), "-days", str(days), "-sha256")
    os.chmod(key, 0o600)
    return CA(cn or name, cert, key)


def _sign(directory, ca, name, cn, eku, hosts=(), days=825, subject=None):
    cert, key = _paths(directory, name)
    csr = _request(directory, name, cn, subject)
    ext = _extfile(directory, name, eku, hosts)
    _run("x509", "-req", "-in", csr, "-CA", ca.cert, "-CAkey", ca.key,
         "-set_serial", str(secrets.randbits(63)), "-days", str(days), "-sha256",
         "-extfile", ext, "-out", cert)
    os.remove(csr)
    os.remove(ext)
    return Cert(cert, key)


def make_server(directory, ca, name="server", hosts=("127.0.0.1", "localhost"), days=825):
    """A server certificate signed by `ca` for `hosts` (subjectAltName IP or
    DNS; CN the first), extendedKeyUsage serverAuth, valid from now."""
    return _sign(directory, ca, name, hosts[0], "serverAuth", hosts, days)


def make_client(directory, ca, name="client", cn=None, days=825, subject=None):
    """A client certificate signed by `ca`, subject CN=cn (name by default)
    or `subject` in openssl's -subj form ("/C=BR/O=Bank/CN=host", X.509's
    order), extendedKeyUsage clientAuth, valid from now."""
    return _sign(directory, ca, name, cn or name, "clientAuth", (), days, subject)


def key_pin(cert):
    """The pin of the certificate's public key as curl and RFC 7469 write it:
    sha256/ and the base64 of the SHA-256 of its DER SubjectPublicKeyInfo
    (openssl x509 -pubkey | openssl pkey -pubin -outform der | openssl dgst
    -sha256 -binary | base64)."""
    pub = subprocess.run([OPENSSL, "x509", "-in", cert, "-noout", "-pubkey"], capture_output=True,
                         check=True, timeout=60).stdout
    der = subprocess.run([OPENSSL, "pkey", "-pubin", "-outform", "der"], input=pub,
                         capture_output=True, check=True, timeout=60).stdout
    return "sha256/" + base64.b64encode(hashlib.sha256(der).digest()).decode()


def make_expired_client(directory, ca, name="expired-client", cn=None):
    """A client certificate signed by `ca` like make_client's, but valid only
    from 30 days ago to yesterday (openssl ca -startdate/-enddate)."""
    cert, key = _paths(directory, name)
    csr = _request(directory, name, cn or name)
    now = datetime.datetime.now(datetime.timezone.utc)
    stamp = "%Y%m%d%H%M%SZ"
    with tempfile.TemporaryDirectory(prefix="ca-db-", dir=directory) as db:
        open(os.path.join(db, "index.txt"), "w").close()
        with open(os.path.join(db, "serial"), "w") as f:
            f.write("%016X\n" % secrets.randbits(63))
        _run("ca", "-batch", "-config", _config(db, db), "-cert", ca.cert, "-keyfile", ca.key,
             "-in", csr, "-out", cert, "-notext",
             "-startdate", (now - datetime.timedelta(days=30)).strftime(stamp),
             "-enddate", (now - datetime.timedelta(days=1)).strftime(stamp),
             "-extfile", _extfile(db, name, "clientAuth"))
    os.remove(csr)
    return Cert(cert, key)


def make_foreign_client(directory, name="foreign-client", cn=None, ca_name=None):
    """A client certificate like make_client's, signed by a CA made for it
    (ca_name, default name + "-ca") that nobody else trusts. Returns the
    Cert; the CA's files are ca_name.pem and ca_name.key."""
    other = make_ca(directory, ca_name or name + "-ca")
    return make_client(directory, other, name, cn)


def openssl_verify(ca_cert, cert, purpose=None):
    """`openssl verify -CAfile ca_cert [-purpose purpose] cert`: (True when
    it verifies, its output). purpose: sslclient, sslserver or None."""
    args = [OPENSSL, "verify", "-CAfile", ca_cert]
    if purpose:
        args += ["-purpose", purpose]
    p = subprocess.run(args + [cert], capture_output=True, text=True, timeout=60)
    return p.returncode == 0, (p.stdout + p.stderr).strip()
