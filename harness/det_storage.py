"""Checkpoint storage for det_harness (Python standard library only): a shared folder
(checkpoint_storage type shared_fs), an S3 bucket (type s3) or a GCS bucket (type gcs, in
det_gcs.py).

Objects are laid out as Determined's storage managers lay them out, `<prefix>/<uuid>/<file>` with
the prefix normalized as its normalize_prefix does, so the master finds and removes checkpoints
written by either library alike.

S3: requests are signed with Signature Version 4 (payloads hashed). Credentials come from the
storage's access_key/secret_key, else AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY(/AWS_SESSION_TOKEN),
else the instance role through IMDSv2 (AWS_EC2_METADATA_SERVICE_ENDPOINT, else 169.254.169.254),
refreshed before it expires. Files above the part size (HARNESS_S3_PART_SIZE, default 16 MiB,
at least S3's 5 MiB) go up as multipart uploads, HARNESS_S3_THREADS (default 4) parts at a time,
each part retried on its own, the upload aborted if one fails for good; large objects come down
in ranged parts the same way. Throttling, 5xx answers and broken connections are retried with
full-jitter backoff; a bucket in another region is followed once S3 names it.
"""

import concurrent.futures
import datetime
import hashlib
import hmac
import http.client
import json
import os
import random
import shutil
import tempfile
import threading
import time
import urllib.parse
import xml.etree.ElementTree as ET

__all__ = ["open_storage", "normalize_prefix", "StorageError", "SharedFolder", "ObjectBucket",
           "S3Bucket", "backoff"]

_MIB = 1 << 20
_ATTEMPTS = 5
_RETRYABLE_CODES = {"SlowDown", "InternalError", "ServiceUnavailable", "RequestTimeout",
                    "Throttling", "RequestLimitExceeded"}


class StorageError(Exception):
    """The store refused a call, or kept failing it."""


def normalize_prefix(prefix):
    """Determined's normalize_prefix: os.path.normpath(prefix).lstrip("/"), "" for none."""
    if not prefix:
        return ""
    parts = prefix.split("/")
    if ".." in parts:
        raise StorageError("checkpoint_storage.prefix must not have a \"..\" segment: %r" % prefix)
    return os.path.normpath(prefix).lstrip("/")


def open_storage(storage, env=None):
    """The store for an experiment's checkpoint_storage (a dict, defaults merged)."""
    env = os.environ if env is None else env
    kind = storage.get("type", "shared_fs")
    if kind == "shared_fs":
        return SharedFolder(env["DET_CHECKPOINT_DIR"])
    if kind == "s3":
        return S3Bucket(storage["bucket"], storage.get("prefix"), storage.get("access_key"),
                        storage.get("secret_key"), storage.get("endpoint_url"), env)
    if kind == "gcs":
        import det_gcs  # the launcher fetches it beside this module
        return det_gcs.GcsBucket(storage["bucket"], storage.get("prefix"), env)
    raise StorageError("det_harness cannot store checkpoints in %r storage" % kind)


class SharedFolder:
    """shared_fs: a folder every agent mounts; a checkpoint is the folder <root>/<uuid>."""

    def __init__(self, root):
        self.root = root

    def staging_folder(self, uuid):
        folder = os.path.join(self.root, uuid + ".partial")
        os.makedirs(folder)
        return folder

    def commit(self, staged, uuid):
        os.rename(staged, os.path.join(self.root, uuid))  # readers never see half a checkpoint
        return _sizes(os.path.join(self.root, uuid))

    def discard(self, staged):
        shutil.rmtree(staged, ignore_errors=True)

    def restore(self, uuid, workdir):
        folder = os.path.join(self.root, uuid)
        if not os.path.isdir(folder):
            raise StorageError("checkpoint %s is not in %s" % (uuid, self.root))
        return folder


def _sizes(folder):
    """{relative path: size} of the files under `folder` (Determined's checkpoint resources)."""
    sizes = {}
    for base, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(base, name)
            sizes[os.path.relpath(path, folder)] = os.path.getsize(path)
    return sizes


class _Credentials:
    """Static keys, or the instance role's, fetched from IMDSv2 and refreshed before expiry."""

    def __init__(self, access_key, secret_key, env):
        self._lock = threading.Lock()
        self._env = env
        self._expires = None
        if access_key:
            self._keys = (access_key, secret_key or "", "")
        elif env.get("AWS_ACCESS_KEY_ID"):
            self._keys = (env["AWS_ACCESS_KEY_ID"], env.get("AWS_SECRET_ACCESS_KEY", ""),
                          env.get("AWS_SESSION_TOKEN", ""))
        else:
            self._keys = None

    def get(self):
        with self._lock:
            stale = self._expires is not None and time.time() > self._expires - 300
            if self._keys is None or stale:
                self._keys, self._expires = self._from_role()
            return self._keys

    def forget(self):
        with self._lock:
            if self._expires is not None:
                self._keys = None

    def _from_role(self):
        endpoint = self._env.get("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://169.254.169.254")
        try:
            token = _imds(endpoint, "PUT", "/latest/api/token",
                          {"X-aws-ec2-metadata-token-ttl-seconds": "21600"})
            headers = {"X-aws-ec2-metadata-token": token}
            path = "/latest/meta-data/iam/security-credentials/"
            role = _imds(endpoint, "GET", path, headers).split("\n")[0].strip()
            doc = json.loads(_imds(endpoint, "GET", path + role, headers))
        except (OSError, ValueError) as e:
            raise StorageError("no AWS credentials: no access_key in checkpoint_storage, no "
                               "AWS_ACCESS_KEY_ID, and no instance role at %s (%s)" % (endpoint, e))
        # "2026-11-22T19:07:51Z", with fractions of a second from some implementations.
        expires = datetime.datetime.strptime(doc["Expiration"].rstrip("Z").split(".")[0],
                                             "%Y-%m-%dT%H:%M:%S")
        expires = expires.replace(tzinfo=datetime.timezone.utc).timestamp()
        return (doc["AccessKeyId"], doc["SecretAccessKey"], doc.get("Token", "")), expires


def _imds(endpoint, method, path, headers):
    parts = urllib.parse.urlsplit(endpoint)
    connection = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=2)
    try:
        connection.request(method, parts.path.rstrip("/") + path, headers=headers)
        answer = connection.getresponse()
        body = answer.read().decode()
        if answer.status != 200:
            raise OSError("IMDS answered %d to %s %s" % (answer.status, method, path))
        return body
    finally:
        connection.close()


class ObjectBucket:
    """What the buckets share: a checkpoint is the objects under <prefix>/<uuid>/, uploaded
    from a staging folder and downloaded (large objects in ranged parts, `threads` at a time)
    into the run's folder. Subclasses provide upload_file, list, delete_object and get_range,
    each retried as its service wants, and set `url` ("s3://b", "gs://b") for messages."""

    def __init__(self, bucket, prefix, part_size, threads):
        self.bucket = bucket
        self.prefix = normalize_prefix(prefix)
        self.part_size = part_size
        self.threads = threads
        self._local = threading.local()

    # --- checkpoints ---------------------------------------------------------------------

    def key_prefix(self, uuid):
        return (self.prefix + "/" + uuid if self.prefix else uuid) + "/"

    def staging_folder(self, uuid):
        return tempfile.mkdtemp(prefix="det-checkpoint-%s-" % uuid)

    def commit(self, staged, uuid):
        sizes = _sizes(staged)
        uploaded = []
        try:
            for rel in sorted(sizes):
                self.upload_file(os.path.join(staged, rel), self.key_prefix(uuid) + rel)
                uploaded.append(self.key_prefix(uuid) + rel)
        except BaseException:
            # Never registered, the checkpoint would be no one's to remove: its objects go now.
            for key in uploaded:
                try:
                    self.delete_object(key)
                except StorageError:
                    pass
            raise
        finally:
            shutil.rmtree(staged, ignore_errors=True)
        return sizes

    def discard(self, staged):
        shutil.rmtree(staged, ignore_errors=True)

    def restore(self, uuid, workdir):
        folder = os.path.join(workdir, "checkpoints", uuid)
        objects = self.list(self.key_prefix(uuid))
        if not objects:
            raise StorageError("checkpoint %s has no objects under %s/%s"
                               % (uuid, self.url, self.key_prefix(uuid)))
        for key, size in objects:
            rel = key[len(self.key_prefix(uuid)):]
            if not rel or rel.endswith("/"):
                continue
            dest = os.path.normpath(os.path.join(folder, rel))
            if not dest.startswith(folder + os.sep):
                raise StorageError("refusing object %r outside the checkpoint's folder" % key)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            self.download_file(key, size, dest)
        return folder

    def download_file(self, key, size, dest):
        with open(dest, "wb") as f:
            f.truncate(size)
        if size == 0:
            return
        parts = [(start, min(size, start + self.part_size) - 1)
                 for start in range(0, size, self.part_size)]

        def get_part(span):
            data = self.get_range(key, span[0], span[1])
            if len(data) != span[1] - span[0] + 1:
                raise StorageError("%s/%s: range %d-%d came back with %d bytes"
                                   % (self.url, key, span[0], span[1], len(data)))
            with open(dest, "r+b") as f:
                f.seek(span[0])
                f.write(data)

        with concurrent.futures.ThreadPoolExecutor(self.threads) as pool:
            list(pool.map(get_part, parts))

    # --- connections: one a thread, kept while the peer keeps it --------------------------

    def _connection(self, scheme, host, port):
        cached = getattr(self._local, "connection", None)
        if cached is not None and cached[0] == (scheme, host, port):
            return cached[1]
        if cached is not None:
            cached[1].close()
        factory = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
        connection = factory(host, port, timeout=120)
        self._local.connection = ((scheme, host, port), connection)
        return connection

    def _drop_connection(self):
        cached = getattr(self._local, "connection", None)
        if cached is not None:
            cached[1].close()
            self._local.connection = None

    def _exchange(self, scheme, host, port, method, target, body, headers):
        """One request on this thread's connection: (status, lower-case headers, body)."""
        connection = self._connection(scheme, host, port)
        connection.request(method, target, body=body, headers=headers)
        answer = connection.getresponse()
        data = answer.read()
        if answer.getheader("Connection", "").lower() == "close":
            self._drop_connection()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, data


def backoff(attempt):
    """Full-jitter exponential backoff before retry `attempt` (1, 2, ...)."""
    time.sleep(random.uniform(0, min(20.0, 0.2 * 2 ** attempt)))


class S3Bucket(ObjectBucket):
    """type s3: objects <prefix>/<uuid>/<file> in a bucket, over S3's REST API."""

    def __init__(self, bucket, prefix, access_key, secret_key, endpoint_url, env):
        super().__init__(bucket, prefix,
                         max(5 * _MIB, int(env.get("HARNESS_S3_PART_SIZE", 16 * _MIB))),
                         max(1, int(env.get("HARNESS_S3_THREADS", 4))))
        self.url = "s3://" + bucket
        self._credentials = _Credentials(access_key, secret_key, env)
        self.region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1"
        self._endpoint_url = endpoint_url
        style = env.get("HARNESS_S3_ADDRESSING_STYLE", "auto")
        dns_name = bucket == bucket.lower() and "." not in bucket and "_" not in bucket
        self._virtual = style == "virtual" or (style == "auto" and not endpoint_url and dns_name)

    # --- objects ---------------------------------------------------------------------------

    def delete_object(self, key):
        self._call("DELETE", key)

    def get_range(self, key, first, last):
        return self._call("GET", key, headers={"Range": "bytes=%d-%d" % (first, last)})

    def upload_file(self, path, key):
        size = os.path.getsize(path)
        if size <= self.part_size:
            with open(path, "rb") as f:
                self._call("PUT", key, body=f.read())
            return
        answer = self._call("POST", key, query={"uploads": ""})
        upload_id = _text(ET.fromstring(answer), "UploadId")
        count = (size + self.part_size - 1) // self.part_size

        def put_part(number):
            offset = (number - 1) * self.part_size
            with open(path, "rb") as f:
                f.seek(offset)
                data = f.read(min(self.part_size, size - offset))
            _, headers = self._call("PUT", key, body=data, with_headers=True,
                                    query={"partNumber": str(number), "uploadId": upload_id})
            return number, headers.get("etag", "")

        try:
            with concurrent.futures.ThreadPoolExecutor(self.threads) as pool:
                etags = sorted(pool.map(put_part, range(1, count + 1)))
            body = "<CompleteMultipartUpload>%s</CompleteMultipartUpload>" % "".join(
                "<Part><PartNumber>%d</PartNumber><ETag>%s</ETag></Part>" % (n, _escape(e))
                for n, e in etags)
            self._call("POST", key, body=body.encode(), query={"uploadId": upload_id})
        except BaseException:
            try:
                self._call("DELETE", key, query={"uploadId": upload_id})
            except StorageError:
                pass  # the bucket's lifecycle rule for incomplete uploads is the backstop
            raise

    def list(self, prefix):
        """[(key, size)] of every object under `prefix`, through every page."""
        objects, token, seen = [], None, set()
        while True:
            query = {"list-type": "2", "prefix": prefix}
            if token:
                query["continuation-token"] = token
            root = ET.fromstring(self._call("GET", "", query=query))
            for item in _children(root, "Contents"):
                objects.append((_text(item, "Key"), int(_text(item, "Size") or 0)))
            if _text(root, "IsTruncated") != "true":
                return objects
            token = _text(root, "NextContinuationToken")
            if not token or token in seen:
                raise StorageError("s3://%s: ListObjectsV2 gave %s continuation token"
                                   % (self.bucket, "a repeated" if token else "no"))
            seen.add(token)

    # --- requests --------------------------------------------------------------------------

    def _target(self):
        """(scheme, host, port, path of the bucket) as this client addresses it."""
        if self._endpoint_url:
            parts = urllib.parse.urlsplit(self._endpoint_url)
            scheme, host = parts.scheme, parts.hostname
            port = parts.port or (443 if scheme == "https" else 80)
            base = parts.path.rstrip("/")
        else:
            scheme, host, port, base = "https", "s3.%s.amazonaws.com" % self.region, 443, ""
        if self._virtual:
            return scheme, self.bucket + "." + host, port, base
        return scheme, host, port, base + "/" + self.bucket

    def _call(self, method, key, query=None, body=b"", headers=None, with_headers=False):
        redirected = refreshed = False
        attempt = 0
        while True:
            try:
                status, answer_headers, data = self._attempt(method, key, query or {}, body,
                                                             dict(headers or {}))
            except (OSError, http.client.HTTPException) as e:
                self._drop_connection()
                status, answer_headers, data = 0, {}, str(e).encode()
            if 200 <= status < 300:
                return (data, answer_headers) if with_headers else data
            code, message, region = _error_of(data)
            region = answer_headers.get("x-amz-bucket-region") or region
            if region and region != self.region and not redirected and \
                    (code in ("AuthorizationHeaderMalformed", "PermanentRedirect") or status == 301):
                self.region, redirected = region, True
                continue
            if code == "ExpiredToken" and not refreshed:
                self._credentials.forget()
                refreshed = True
                continue
            retryable = status == 0 or status == 429 or status >= 500 or code in _RETRYABLE_CODES
            attempt += 1
            if not retryable or attempt >= _ATTEMPTS:
                raise StorageError("s3 %s s3://%s/%s failed: %s%s%s" % (
                    method, self.bucket, key, "HTTP %d " % status if status else "",
                    code + ": " if code else "", message or data[:200].decode(errors="replace")))
            backoff(attempt)

    def _attempt(self, method, key, query, body, headers):
        scheme, host, port, base = self._target()
        path = base + "/" + key
        access_key, secret_key, token = self._credentials.get()
        now = datetime.datetime.now(datetime.timezone.utc)
        amz_date = now.strftime("%Y%m%dT%H%M%SZ")
        default_port = 443 if scheme == "https" else 80
        headers["Host"] = host if port == default_port else "%s:%d" % (host, port)
        headers["x-amz-content-sha256"] = hashlib.sha256(body).hexdigest()
        headers["x-amz-date"] = amz_date
        if token:
            headers["x-amz-security-token"] = token
        if body or method in ("PUT", "POST"):
            headers["Content-Length"] = str(len(body))
        quoted_path = urllib.parse.quote(path, safe="/~")
        canonical_query = "&".join(
            "%s=%s" % (urllib.parse.quote(k, safe="~"), urllib.parse.quote(v, safe="~"))
            for k, v in sorted(query.items()))
        signed = sorted((k.lower(), " ".join(str(v).split())) for k, v in headers.items())
        signed_names = ";".join(name for name, _ in signed)
        canonical = "\n".join([method, quoted_path, canonical_query,
                               "".join("%s:%s\n" % pair for pair in signed), signed_names,
                               headers["x-amz-content-sha256"]])
        scope = "%s/%s/s3/aws4_request" % (amz_date[:8], self.region)
        to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                             hashlib.sha256(canonical.encode()).hexdigest()])
        signing_key = ("AWS4" + secret_key).encode()
        for part in (amz_date[:8], self.region, "s3", "aws4_request"):
            signing_key = hmac.new(signing_key, part.encode(), hashlib.sha256).digest()
        signature = hmac.new(signing_key, to_sign.encode(), hashlib.sha256).hexdigest()
        headers["Authorization"] = "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, " \
                                   "Signature=%s" % (access_key, scope, signed_names, signature)
        return self._exchange(scheme, host, port, method,
                              quoted_path + ("?" + canonical_query if query else ""),
                              body if body or method in ("PUT", "POST") else None, headers)


def _children(node, name):
    return [child for child in node if child.tag.rsplit("}", 1)[-1] == name]


def _text(node, name):
    found = _children(node, name)
    return (found[0].text or "") if found else ""


def _error_of(data):
    """(code, message, region) of an S3 error document; "" for each it lacks."""
    try:
        root = ET.fromstring(data)
    except ET.ParseError:
        return "", "", ""
    return _text(root, "Code"), _text(root, "Message"), _text(root, "Region")


def _escape(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace(
        '"', "&quot;")
