"""Checkpoints in Google Cloud Storage for det_harness (Python standard library only): type gcs,
objects <prefix>/<uuid>/<file> over the JSON API, as Determined's GCS manager lays them out.

Endpoint: https://storage.googleapis.com, or STORAGE_EMULATOR_HOST ("host:port" or a URL), the
variable Google's client libraries read for an emulator.

Credentials, in the order Google's libraries look for Application Default Credentials:
GOOGLE_APPLICATION_CREDENTIALS (a service account key, signed with the `cryptography` package
when it imports, else with the `openssl` command; or an authorized_user file), gcloud's
application_default_credentials.json, then the metadata server (GCE_METADATA_HOST, else
metadata.google.internal): the instance's service account. With an emulator and none of them,
calls go without a token, as Google's libraries send them there.

Files up to HARNESS_GCS_CHUNK_SIZE (default 16 MiB) go up in one call; larger ones as resumable
uploads in chunks of that size (a multiple of 256 KiB), a chunk that fails sent again from what
the service says it has. The MD5 the service computed is checked against the file's. Large
objects come down in ranged parts, HARNESS_GCS_THREADS (default 4) at a time. 408, 429, 5xx
answers and broken connections are retried with full-jitter backoff; a 401 fetches a new token
once.
"""

import base64
import hashlib
import http.client
import json
import os
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from det_storage import ObjectBucket, StorageError, backoff

__all__ = ["GcsBucket", "GoogleCredentials"]

_MIB = 1 << 20
_QUANTUM = 256 << 10  # resumable chunks are multiples of this
_ATTEMPTS = 5
_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
_KEY_FIELDS = {"authorized_user": ("client_id", "client_secret", "refresh_token"),
               "service_account": ("client_email", "private_key")}


def _b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=")


def _rs256(private_key_pem, message):
    """An RS256 signature of `message` with a PEM key: `cryptography` if it imports, else the
    `openssl` command."""
    try:
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import padding
    except ImportError:
        pass
    else:
        key = serialization.load_pem_private_key(private_key_pem.encode(), password=None)
        return key.sign(message, padding.PKCS1v15(), hashes.SHA256())
    with tempfile.NamedTemporaryFile("w", suffix=".pem") as key_file:
        os.chmod(key_file.name, 0o600)
        key_file.write(private_key_pem)
        key_file.flush()
        try:
            done = subprocess.run(["openssl", "dgst", "-sha256", "-sign", key_file.name],
                                  input=message, capture_output=True, check=False)
        except OSError as e:
            raise StorageError("a service account key needs the cryptography package or the "
                               "openssl command to sign with, and neither is here (%s)" % e)
    if done.returncode != 0:
        raise StorageError("openssl could not sign with the service account key: %s"
                           % done.stderr.decode(errors="replace").strip())
    return done.stdout


class _TokenUnavailable(StorageError):
    """A token could not be fetched for now (no answer, 5xx, 429): worth asking again."""


def _post_form(url, fields, who):
    request = urllib.request.Request(url, data=urllib.parse.urlencode(fields).encode(),
                                     headers={"Content-Type": "application/x-www-form-urlencoded"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read())
    except urllib.error.HTTPError as e:
        error = _TokenUnavailable if e.code >= 500 or e.code == 429 else StorageError
        raise error("%s refused a token: HTTP %d %s"
                    % (who, e.code, e.read()[:300].decode(errors="replace")))
    except (OSError, ValueError, http.client.HTTPException) as e:
        raise _TokenUnavailable("%s did not answer with a token: %s" % (who, e))


class GoogleCredentials:
    """An OAuth 2.0 access token from Application Default Credentials, fetched again before it
    expires. get() is None when there are none and calls go to an emulator."""

    def __init__(self, env, anonymous_ok):
        self._env = env
        self._anonymous_ok = anonymous_ok
        self._lock = threading.Lock()
        self._token, self._expires = None, 0.0
        self._fetch = self._source()

    def get(self):
        with self._lock:
            if self._fetch is None:
                return None
            if self._token is None or time.time() > self._expires - 300:
                for attempt in range(1, _ATTEMPTS + 1):
                    try:
                        doc = self._fetch()
                        break
                    except _TokenUnavailable:
                        if attempt == _ATTEMPTS:
                            raise
                        backoff(attempt)
                if not isinstance(doc, dict) or "access_token" not in doc:
                    raise StorageError("the token answer has no access_token")
                self._token = doc["access_token"]
                self._expires = time.time() + float(doc.get("expires_in", 3600))
            return self._token

    def forget(self, token):
        """A call was refused with `token`: the next get() fetches another (unless a thread
        already did)."""
        with self._lock:
            if self._token == token:
                self._token = None

    def _source(self):
        """The first place with credentials, as a function fetching a token answer."""
        env = self._env
        files = []
        if env.get("GOOGLE_APPLICATION_CREDENTIALS"):
            if not os.path.isfile(env["GOOGLE_APPLICATION_CREDENTIALS"]):
                raise StorageError("GOOGLE_APPLICATION_CREDENTIALS names %s, which is not a file "
                                   "this run can read" % env["GOOGLE_APPLICATION_CREDENTIALS"])
            files.append(env["GOOGLE_APPLICATION_CREDENTIALS"])
        config = env.get("CLOUDSDK_CONFIG") or os.path.join(os.path.expanduser("~"), ".config",
                                                             "gcloud")
        files.append(os.path.join(config, "application_default_credentials.json"))
        for path in files:
            if os.path.isfile(path):
                return self._from_file(path)
        host = env.get("GCE_METADATA_HOST", "metadata.google.internal")
        url = "http://%s/computeMetadata/v1/instance/service-accounts/default/token" % host
        try:
            self._metadata_token(url, probe=True)  # fails fast off Compute Engine
            return lambda: self._metadata_token(url)
        except StorageError as e:
            if self._anonymous_ok:
                return None
            raise StorageError("no Google credentials: GOOGLE_APPLICATION_CREDENTIALS is not "
                               "set, %s does not exist, and no metadata server answers at %s "
                               "(%s)" % (files[-1], host, e))

    def _from_file(self, path):
        try:
            with open(path) as f:
                key = json.load(f)
        except (OSError, ValueError) as e:
            raise StorageError("cannot read Google credentials %s: %s" % (path, e))
        kind = key.get("type") if isinstance(key, dict) else None
        missing = [field for field in _KEY_FIELDS.get(kind, ()) if not key.get(field)]
        if missing:
            raise StorageError("Google credentials %s lack %s" % (path, ", ".join(missing)))
        if kind == "authorized_user":
            return lambda: _post_form(
                key.get("token_uri", "https://oauth2.googleapis.com/token"),
                {"grant_type": "refresh_token", "client_id": key["client_id"],
                 "client_secret": key["client_secret"], "refresh_token": key["refresh_token"]},
                "the token endpoint for %s" % path)
        if kind == "service_account":
            return lambda: self._service_account_token(key, path)
        raise StorageError("Google credentials %s are of type %r; det_harness reads "
                           "service_account and authorized_user files" % (path, kind))

    @staticmethod
    def _service_account_token(key, path):
        token_uri = key.get("token_uri", "https://oauth2.googleapis.com/token")
        now = int(time.time())
        header = {"alg": "RS256", "typ": "JWT", "kid": key.get("private_key_id", "")}
        claims = {"iss": key["client_email"], "scope": _SCOPE, "aud": token_uri,
                  "iat": now, "exp": now + 3600}
        signing_input = _b64url(json.dumps(header).encode()) + b"." + \
            _b64url(json.dumps(claims).encode())
        assertion = signing_input + b"." + _b64url(_rs256(key["private_key"], signing_input))
        return _post_form(token_uri, {"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer",
                                      "assertion": assertion.decode()},
                          "the token endpoint for %s" % path)

    @staticmethod
    def _metadata_token(url, probe=False):
        request = urllib.request.Request(url, headers={"Metadata-Flavor": "Google"})
        try:
            with urllib.request.urlopen(request, timeout=2 if probe else 10) as answer:
                if answer.headers.get("Metadata-Flavor") != "Google":
                    raise StorageError("%s is not a metadata server" % url)
                return json.loads(answer.read())
        except urllib.error.HTTPError as e:
            error = _TokenUnavailable if e.code >= 500 or e.code == 429 else StorageError
            raise error("the metadata server at %s: %s" % (url, e))
        except (OSError, ValueError, http.client.HTTPException) as e:
            raise _TokenUnavailable("the metadata server at %s: %s" % (url, e))


class GcsBucket(ObjectBucket):
    """type gcs: objects <prefix>/<uuid>/<file> in a bucket, over the JSON API."""

    def __init__(self, bucket, prefix, env):
        chunk = int(env.get("HARNESS_GCS_CHUNK_SIZE", 16 * _MIB))
        super().__init__(bucket, prefix, max(_QUANTUM, chunk - chunk % _QUANTUM),
                         max(1, int(env.get("HARNESS_GCS_THREADS", 4))))
        self.url = "gs://" + bucket
        emulator = env.get("STORAGE_EMULATOR_HOST", "")
        if emulator and "://" not in emulator:
            emulator = "http://" + emulator
        parts = urllib.parse.urlsplit(emulator or "https://storage.googleapis.com")
        self._scheme, self._host = parts.scheme, parts.hostname
        self._port = parts.port or (443 if parts.scheme == "https" else 80)
        self._credentials = GoogleCredentials(env, anonymous_ok=bool(emulator))
        self._objects = "/storage/v1/b/%s/o" % urllib.parse.quote(bucket, safe="")

    def _object(self, key):
        return self._objects + "/" + urllib.parse.quote(key, safe="")

    # --- objects ---------------------------------------------------------------------------

    def delete_object(self, key):
        self._call("DELETE", self._object(key), ok=(200, 204, 404))

    def get_range(self, key, first, last):
        return self._call("GET", self._object(key), query={"alt": "media"},
                          headers={"Range": "bytes=%d-%d" % (first, last)})

    def list(self, prefix):
        """[(key, size)] of every object under `prefix`, through every page."""
        objects, token, seen = [], None, set()
        while True:
            query = {"prefix": prefix, "maxResults": "1000",
                     "fields": "items(name,size),nextPageToken"}
            if token:
                query["pageToken"] = token
            try:
                page = json.loads(self._call("GET", self._objects, query=query))
                objects.extend((item["name"], int(item["size"])) for item in page.get("items", []))
            except (ValueError, KeyError, TypeError, AttributeError) as e:
                raise StorageError("%s: objects.list answered what is not a list page (%r)" %
                                   (self.url, e))
            token = page.get("nextPageToken")
            if not token:
                return objects
            if token in seen:
                raise StorageError("%s: objects.list gave a repeated page token" % self.url)
            seen.add(token)

    def upload_file(self, path, key):
        size = os.path.getsize(path)
        upload = "/upload" + self._objects
        if size <= self.part_size:
            with open(path, "rb") as f:
                data = f.read()
            answer = self._call("POST", upload, query={"uploadType": "media", "name": key},
                                body=data, headers={"Content-Type": "application/octet-stream"})
            return self._check_md5(key, answer, hashlib.md5(data))
        _, headers = self._call(
            "POST", upload, query={"uploadType": "resumable"},
            body=json.dumps({"name": key}).encode(), with_headers=True,
            headers={"Content-Type": "application/json; charset=UTF-8",
                     "X-Upload-Content-Type": "application/octet-stream",
                     "X-Upload-Content-Length": str(size)})
        session = headers.get("location")
        if not session:
            raise StorageError("%s/%s: the resumable upload began without a Location" %
                               (self.url, key))
        self._send_chunks(path, key, size, session)

    def _send_chunks(self, path, key, size, session):
        """Sends the file from where the session stands; a chunk that fails, or that the service
        did not take, is sent again from what it says it holds (at most _ATTEMPTS times in a row
        without progress)."""
        md5, offset, failures = hashlib.md5(), 0, 0
        with open(path, "rb") as f:
            while True:
                f.seek(offset)
                chunk = f.read(min(self.part_size, size - offset))
                span = ("bytes %d-%d/%d" % (offset, offset + len(chunk) - 1, size) if chunk
                        else "bytes */%d" % size)
                status, headers, data = self._session_put(session, chunk, span)
                if status in (200, 201):
                    md5.update(chunk)
                    return self._check_md5(key, data, md5)
                if status not in (0, 308, 408, 429) and status < 500:
                    raise StorageError("%s/%s: resumable upload refused: %s" %
                                       (self.url, key, _error_text(status, data)))
                if status != 308:  # ask the session what it holds
                    backoff(failures + 1)
                    status, headers, data = self._session_put(session, b"", "bytes */%d" % size)
                    if status in (200, 201):
                        return self._check_md5(key, data, _md5_of(path, size))
                stored = self._stored(headers) if status == 308 else offset
                if not 0 <= stored <= size:
                    raise StorageError("%s/%s: the session says it holds %d of %d bytes" %
                                       (self.url, key, stored, size))
                if stored > offset:
                    failures = 0
                else:
                    failures += 1
                    if failures >= _ATTEMPTS:
                        raise StorageError("%s/%s: resumable upload made no progress past byte "
                                           "%d: %s" % (self.url, key, offset,
                                                       _error_text(status, data)))
                    if status == 308:
                        backoff(failures)
                if stored == offset + len(chunk):
                    md5.update(chunk)
                elif stored != offset:
                    md5 = _md5_of(path, stored)
                offset = stored

    @staticmethod
    def _stored(headers):
        """How many bytes a 308 says the session holds ("Range: bytes=0-N"; none: 0)."""
        given = headers.get("range", "")
        return int(given.rsplit("-", 1)[1]) + 1 if "-" in given else 0

    def _session_put(self, session, chunk, span):
        parts = urllib.parse.urlsplit(session)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        headers = {"Content-Range": span, "Content-Length": str(len(chunk))}
        target = parts.path + ("?" + parts.query if parts.query else "")
        try:
            token = self._credentials.get()
            if token:
                headers["Authorization"] = "Bearer " + token
            return self._exchange(parts.scheme, parts.hostname, port, "PUT", target, chunk,
                                  headers)
        except _TokenUnavailable as e:
            return 0, {}, str(e).encode()
        except (OSError, http.client.HTTPException) as e:
            self._drop_connection()
            return 0, {}, str(e).encode()

    def _check_md5(self, key, answer, md5):
        try:
            stored = json.loads(answer).get("md5Hash")
        except (ValueError, AttributeError):
            raise StorageError("%s/%s: the upload's answer is not an object resource" %
                               (self.url, key))
        mine = base64.b64encode(md5.digest()).decode()
        if stored is not None and stored != mine:
            self.delete_object(key)
            raise StorageError("%s/%s: the service holds MD5 %s, the file has %s; the object was "
                               "deleted" % (self.url, key, stored, mine))

    # --- requests --------------------------------------------------------------------------

    def _call(self, method, path, query=None, body=b"", headers=None, with_headers=False,
              ok=(200, 201, 204, 206)):
        refreshed, attempt = False, 0
        target = path + ("?" + urllib.parse.urlencode(query) if query else "")
        while True:
            sent = dict(headers or {})
            if body or method in ("PUT", "POST"):
                sent["Content-Length"] = str(len(body))
            token = None
            try:
                token = self._credentials.get()
                if token:
                    sent["Authorization"] = "Bearer " + token
                status, answer_headers, data = self._exchange(
                    self._scheme, self._host, self._port, method, target,
                    body if body or method in ("PUT", "POST") else None, sent)
            except _TokenUnavailable as e:
                status, answer_headers, data = 0, {}, str(e).encode()
            except (OSError, http.client.HTTPException) as e:
                self._drop_connection()
                status, answer_headers, data = 0, {}, str(e).encode()
            if status in ok:
                return (data, answer_headers) if with_headers else data
            if status == 401 and token and not refreshed:
                self._credentials.forget(token)
                refreshed = True
                continue
            attempt += 1
            retryable = status in (0, 408, 429) or status >= 500
            if not retryable or attempt >= _ATTEMPTS:
                raise StorageError("gcs %s %s%s failed: %s" % (
                    method, self.url, path[len(self._objects):] if path.startswith(
                        self._objects) else path, _error_text(status, data)))
            backoff(attempt)


def _md5_of(path, size):
    md5 = hashlib.md5()
    with open(path, "rb") as f:
        while size > 0:
            block = f.read(min(size, 8 * _MIB))
            if not block:
                break
            md5.update(block)
            size -= len(block)
    return md5


def _error_text(status, data):
    """"HTTP 403 forbidden: message" from a Google error document (or the body's start)."""
    try:
        error = json.loads(data)["error"]
        reasons = [e.get("reason", "") for e in error.get("errors", []) if isinstance(e, dict)]
        return "HTTP %d %s: %s" % (status, reasons[0] if reasons else error.get("status", ""),
                                   error.get("message", ""))
    except (ValueError, KeyError, TypeError, AttributeError):
        text = data[:300].decode(errors="replace") if isinstance(data, bytes) else str(data)
        return ("HTTP %d: %s" % (status, text)) if status else text
