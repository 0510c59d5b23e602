"""Valid account bodies for the end-to-end tests: CNPJs and CPFs with their check
digits, tiny real files (PDF, PNG, JPEG), each number new within a test run."""
import base64
import itertools
import random

PDF_BYTES = b"%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"
PNG_BYTES = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489")
JPG_BYTES = bytes.fromhex("ffd8ffe000104a46494600010100000100010000ffd9")
PDF, PNG, JPG = (base64.b64encode(b).decode() for b in (PDF_BYTES, PNG_BYTES, JPG_BYTES))

_serial = itertools.count(random.randrange(10 ** 6, 9 * 10 ** 6, 1000))


def _digit(digits, weights):
    s = sum(int(d) * w for d, w in zip(digits, weights)) % 11
    return "0" if s < 2 else str(11 - s)


def cnpj():
    """A new valid CNPJ (14 digits)."""
    base = "%08d0001" % next(_serial)
    base += _digit(base, [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2])
    return base + _digit(base, [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2])


def cpf():
    """A new valid CPF (11 digits)."""
    base = "%09d" % (next(_serial) * 7 % 10 ** 9)
    base += _digit(base, range(10, 1, -1))
    return base + _digit(base, range(11, 1, -1))


def rep(cpf_, face=PNG, front=JPG, back=None):
    docs = {"picture_face": face, "picture_identity_front": front, "picture_identity_type": "RG"}
    if back:
        docs["picture_identity_back"] = back
    return {"name": "Fulano de Tal", "birthDate": "1990-05-17", "email": "fulano@example.com",
            "taxID": cpf_, "phone": "+55 11 94321-4321", "documents": docs}


def account_body(cpfs, taxid=None, documents=None, reps=None, **extra):
    """A valid account create body naming the representatives `cpfs`."""
    taxid = taxid or cnpj()
    b = {"officialName": "Empresa %s Ltda" % taxid[:6], "tradeName": "Loja %s" % taxid[:6],
         "taxID": taxid, "documents": documents or [PDF],
         "address": {"zipcode": "01310-100", "street": "Av. Paulista", "number": "1000",
                     "neighborhood": "Bela Vista", "city": "São Paulo", "state": "SP"},
         "representatives": reps or [rep(c) for c in cpfs]}
    b.update(extra)
    return b
