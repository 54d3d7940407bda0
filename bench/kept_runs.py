"""What the benches keep between runs, so a long one cut short resumes where
it stopped: results kept under a key, and a name for a file by its content
(a retrained adapter under the same name is not taken for the old one)."""
import hashlib
import json
import os


def file_identity(path):
    """A file's name and the start of its SHA-256, or the word given (auto,
    none) or "default" for no file."""
    if not os.path.isfile(path):
        return os.path.basename(path) or "default"
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return f"{os.path.basename(path)}.{digest.hexdigest()[:12]}"


def kept(folder, key, compute):
    """compute()'s JSON result, kept as folder/key.json and read back on a
    later run instead of computed again; with no folder, computed."""
    if not folder:
        return compute()
    path = os.path.join(folder, key + ".json")
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    result = compute()
    os.makedirs(folder, exist_ok=True)
    with open(path + ".part", "w") as f:
        json.dump(result, f)
    os.replace(path + ".part", path)
    return result
