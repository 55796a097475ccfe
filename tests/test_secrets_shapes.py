"""Secret shapes in the contexts transcripts hold them (a shell command, a tool's output, a .env
file, JSON text): each secret value is gone after redaction; non-secrets stay byte for byte.

The values are made up here, with the length and alphabet of the real thing, from a seeded
generator: no real secret is in this file.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compactcli import gitleaks
from compactcli.redact import MARKER, redact, redact_kinds, redact_named, secret_kinds

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"


def fake(alphabet: str, size: int, seed: str) -> str:
    """A made-up value: `size` characters of `alphabet`, the same for the same seed."""
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(size))


@dataclass(frozen=True)
class Shape:
    name: str
    secret: str
    context: str  # where `{s}` stands for the secret

    def text(self) -> str:
        return self.context.replace("{s}", self.secret)


AWS_SECRET = fake(B64, 40, "aws-secret")
PEM_BODY = "\n".join(fake(B64, 64, f"pem{i}") for i in range(6))
RSA = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----"
OPENSSH = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PEM_BODY}\n-----END OPENSSH PRIVATE KEY-----"
PKCS8 = f"-----BEGIN PRIVATE KEY-----\n{PEM_BODY}\n-----END PRIVATE KEY-----"
EC = f"-----BEGIN EC PRIVATE KEY-----\n{PEM_BODY}\n-----END EC PRIVATE KEY-----"
JWT = (
    base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    + "."
    + base64.urlsafe_b64encode(b'{"sub":"1234567890","name":"Dana","iat":1516239022}')
    .decode()
    .rstrip("=")
    + "."
    + fake(URLSAFE, 43, "jwt-signature")
)
TWILIO_SID = "AC" + fake(HEX, 32, "twilio-sid")
TWILIO_TOKEN = fake(HEX, 32, "twilio-token")

SHAPES = [
    # the kinds a security review found left in place
    Shape(
        "google-api-key",
        "AIza" + fake(URLSAFE, 34, "google") + "-",
        'curl "https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key={s}"',
    ),
    Shape("google-api-key-env", "AIza" + fake(URLSAFE, 35, "google2"), "GOOGLE_API_KEY={s}\n"),
    Shape(
        "gitlab-pat",
        "glpat-" + fake(URLSAFE, 20, "gitlab"),
        "git clone https://gitlab.example.com/grp/app.git && export GITLAB_TOKEN={s}",
    ),
    Shape(
        "gitlab-pat-header",
        "glpat-" + fake(ALNUM, 20, "gitlab2"),
        'curl --header "PRIVATE-TOKEN: {s}" https://gitlab.com/api/v4/projects',
    ),
    Shape(
        "huggingface-token",
        "hf_" + fake(string.ascii_letters, 34, "hf"),
        "huggingface-cli login --token {s}",
    ),
    Shape("huggingface-token-alnum", "hf_" + fake(ALNUM, 34, "hf2"), '{"HF_TOKEN": "{s}"}'),
    Shape(
        "twilio-api-key",
        "SK" + fake(HEX, 32, "twilio-sk"),
        "twilio api:core:messages:create --api-key {s} --to +15555550100",
    ),
    Shape("twilio-sid", TWILIO_SID, "TWILIO_ACCOUNT_SID={s}\n"),
    Shape(
        "twilio-auth-token-after-sid",
        TWILIO_TOKEN,
        f'client = Client("{TWILIO_SID}", "{{s}}")',
    ),
    Shape(
        "twilio-curl",
        TWILIO_TOKEN,
        f"curl -X POST https://api.twilio.com/2010-04-01/Accounts -u {TWILIO_SID}:{{s}}",
    ),
    Shape("twilio-auth-token-env", TWILIO_TOKEN, "TWILIO_AUTH_TOKEN={s}"),
    Shape(
        "sendgrid",
        "SG." + fake(URLSAFE, 22, "sg1") + "." + fake(URLSAFE, 43, "sg2"),
        "sg = SendGridAPIClient('{s}')",
    ),
    Shape(
        "azure-storage",
        fake(B64, 86, "azure") + "==",
        "AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=acme;"
        "AccountKey={s};EndpointSuffix=core.windows.net",
    ),
    Shape(
        "azure-sas",
        fake(ALNUM, 40, "sas") + "%3D",
        "https://acme.blob.core.windows.net/c/f.txt?sv=2022-11-02&se=2025-01-01&sp=r&sig={s}",
    ),
    Shape("mysql-p", "S3cr3t!Pa55", "mysql -u root -p{s} -h db.internal shop < dump.sql"),
    Shape("mysqldump-quoted", "pa55 w0rd", "mysqldump -uadmin -p'{s}' --all-databases > all.sql"),
    Shape("mysql-password-option", "Tr1cky-Pass", "mysql --user=app --password={s} shop"),
    Shape("pgpassword", "pgS3cret42", "PGPASSWORD={s} psql -h localhost -U postgres -c 'select 1'"),
    Shape("sshpass", "Wint3r2024!", "sshpass -p '{s}' ssh deploy@10.0.0.5 uptime"),
    Shape(
        "docker-password", "d0ckerPw!", "docker login -u bob --password {s} registry.example.com"
    ),
    Shape(
        "aws-configure",
        AWS_SECRET,
        "$ aws configure\nAWS Access Key ID [None]: AKIAQ3EGRTPLVXNYZ2KB\n"
        "AWS Secret Access Key [None]: {s}\nDefault region name [None]: eu-west-1",
    ),
    Shape(
        "aws-credentials-file",
        AWS_SECRET,
        "[default]\naws_access_key_id = AKIAQ3EGRTPLVXNYZ2KB\naws_secret_access_key = {s}\n",
    ),
    Shape(
        "aws-sts-json",
        AWS_SECRET,
        '{"Credentials": {"AccessKeyId": "ASIAQ3EGRTPLVXNYZ2KB", "SecretAccessKey": "{s}", '
        '"Expiration": "2025-01-01T00:00:00Z"}}',
    ),
    Shape(
        "aws-session-token",
        "FwoGZXIvYXdzE" + fake(B64, 120, "aws-session"),
        'export AWS_SESSION_TOKEN="{s}"',
    ),
    Shape("label-then-assignment", "hunter2-prod", "Password: db_password = {s}"),
    Shape("label-then-key", fake(ALNUM, 24, "label"), "Secret: API_KEY = {s}"),
    Shape("typed-default", "changeMe!42", 'class Settings:\n    password: str = "{s}"'),
    # the kinds every scanner knows
    Shape("pem-rsa", RSA, "$ cat ~/.ssh/deploy_key\n{s}\n"),
    Shape("pem-openssh", OPENSSH, "{s}"),
    Shape("pem-ec", EC, "key.pem:\n{s}"),
    Shape("pem-pkcs8-in-json", PKCS8, '{"type": "service_account", "private_key": "{s}"}'),
    Shape("jwt", JWT, "Set-Cookie: session={s}; HttpOnly"),
    Shape(
        "bearer",
        fake(URLSAFE, 40, "bearer"),
        "curl -H 'Authorization: Bearer {s}' https://api.example.com/v1/me",
    ),
    Shape(
        "authorization-token",
        fake(HEX, 40, "auth-token"),
        'requests.get(url, headers={"Authorization": "token {s}"})',
    ),
    Shape(
        "basic-auth",
        base64.b64encode(b"admin:" + fake(ALNUM, 16, "basic").encode()).decode(),
        "Authorization: Basic {s}",
    ),
    Shape("curl-user", "s3cretPw", "curl -u admin:{s} https://jenkins.example.com/api/json"),
    Shape(
        "url-password",
        "Pg-Pa55word",
        "DATABASE_URL=postgres://app:{s}@db.internal:5432/app",
    ),
    Shape("url-password-empty-user", "r3disPass", "REDIS_URL=redis://:{s}@cache:6379/0"),
    Shape(
        "url-key-webhook",
        str(uuid.UUID(fake(HEX, 32, "webhook-key"))),
        "curl -s 'https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key={s}' -d @msg.json",
    ),
    Shape(
        "url-access-token",
        fake(HEX, 64, "robot-token"),
        "POST https://oapi.dingtalk.com/robot/send?access_token={s}&timestamp=1716280000",
    ),
    Shape(
        "openai-project",
        "sk-proj-" + fake(URLSAFE, 48, "openai") + "T3BlbkFJ" + fake(URLSAFE, 48, "openai2"),
        "export OPENAI_API_KEY={s}",
    ),
    Shape("openai-legacy", "sk-" + fake(ALNUM, 48, "openai-legacy"), "openai.api_key = '{s}'"),
    Shape(
        "anthropic",
        "sk-ant-api03-" + fake(URLSAFE, 93, "anthropic") + "AA",
        'client = anthropic.Anthropic(api_key="{s}")',
    ),
    Shape(
        "github-pat",
        "ghp_" + fake(ALNUM, 36, "github"),
        "git remote set-url origin https://{s}@github.com/o/r",
    ),
    Shape(
        "github-fine-grained",
        "github_pat_" + fake(ALNUM, 22, "gh1") + "_" + fake(ALNUM, 59, "gh2"),
        "gh auth login --with-token <<< {s}",
    ),
    Shape("github-oauth", "gho_" + fake(ALNUM, 36, "gho"), "oauth_token: {s}"),
    Shape(
        "slack-bot",
        "xoxb-"
        + fake("0123456789", 12, "sl1")
        + "-"
        + fake("0123456789", 13, "sl2")
        + "-"
        + fake(ALNUM, 24, "sl3"),
        "SLACK_BOT_TOKEN={s}",
    ),
    Shape(
        "slack-webhook",
        "https://hooks.slack.com/services/T"
        + fake(ALNUM.upper(), 8, "wh1")
        + "/B"
        + fake(ALNUM.upper(), 10, "wh2")
        + "/"
        + fake(ALNUM, 24, "wh3"),
        'curl -X POST -d \'{"text":"deployed"}\' {s}',
    ),
    Shape(
        "slack-app",
        "xapp-1-A"
        + fake("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", 10, "xapp")
        + "-"
        + fake("0123456789", 13, "xapp2")
        + "-"
        + fake(HEX, 64, "xapp3"),
        "SLACK_APP_TOKEN={s}",
    ),
    Shape("stripe-live", "sk_live_" + fake(ALNUM, 24, "stripe"), 'stripe.api_key = "{s}"'),
    Shape("stripe-restricted", "rk_live_" + fake(ALNUM, 24, "stripe-rk"), "STRIPE_KEY={s}"),
    Shape(
        "stripe-webhook",
        "whsec_" + fake(ALNUM, 32, "whsec"),
        "stripe listen --forward-to localhost:3000\n> Ready! Your webhook signing secret is {s}",
    ),
    Shape(
        "aws-access-key",
        "AKIA" + fake(string.ascii_uppercase + "234567", 16, "akia"),
        "aws_access_key_id={s}",
    ),
    Shape(
        "env-secret-key",
        "django-insecure-"
        + fake(ALNUM + "!@#%^&*(-_=+)", 40, "django").replace("(", "x").replace(")", "y"),
        "SECRET_KEY={s}\nDEBUG=False",
    ),
    Shape("env-db-pass", "Pr0d-DB-pass", "DB_HOST=db\nDB_PASS={s}\nDB_PORT=5432"),
    Shape("env-quoted-spaces", "correct horse battery staple", 'export DB_PASSWORD="{s}"'),
    Shape("npm-token", "npm_" + fake(ALNUM, 36, "npm"), "//registry.npmjs.org/:_authToken={s}"),
    Shape(
        "npm-legacy-uuid",
        str(uuid.UUID(int=0x1234567890ABCDEF1234567890ABCDEF)),
        "//registry.npmjs.org/:_authToken={s}\n",
    ),
    Shape(
        "pypi",
        "pypi-AgEIcHlwaS5vcmc" + fake(URLSAFE, 70, "pypi"),
        "[pypi]\n  username = __token__\n  password = {s}",
    ),
    Shape(
        "pypi-twine",
        "pypi-AgEIcHlwaS5vcmc" + fake(URLSAFE, 80, "pypi2"),
        "twine upload -u __token__ -p {s} dist/*",
    ),
    Shape("digitalocean", "dop_v1_" + fake(HEX, 64, "do"), "doctl auth init --access-token {s}"),
    Shape("shopify", "shpat_" + fake(HEX, 32, "shopify"), 'SHOPIFY_ACCESS_TOKEN="{s}"'),
    Shape(
        "discord-bot",
        "MT"
        + fake(ALNUM, 22, "discord1")
        + "."
        + fake(URLSAFE, 6, "discord2")
        + "."
        + fake(URLSAFE, 38, "discord3"),
        "client.run('{s}')",
    ),
    Shape(
        "telegram-bot",
        "7123456789:AA" + fake(URLSAFE, 33, "telegram"),
        "curl https://api.telegram.org/bot{s}/getMe",
    ),
    Shape(
        "databricks",
        "dapi" + fake(HEX, 32, "databricks"),
        "databricks configure --token\nToken: {s}",
    ),
    Shape(
        "doppler",
        "dp.pt." + fake(ALNUM, 43, "doppler"),
        "DOPPLER_TOKEN={s} doppler run -- npm start",
    ),
    Shape("linear", "lin_api_" + fake(ALNUM, 40, "linear"), "LINEAR_API_KEY={s}"),
    Shape(
        "grafana",
        "glsa_" + fake(ALNUM, 32, "grafana") + "_" + fake(HEX, 8, "grafana2"),
        "Authorization: Bearer {s}",
    ),
    Shape(
        "postman",
        "PMAK-" + fake(HEX, 24, "pm1") + "-" + fake(HEX, 34, "pm2"),
        "newman run c.json --postman-api-key {s}",
    ),
    Shape(
        "age",
        "AGE-SECRET-KEY-1" + fake("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58, "age"),
        "# created: 2024-01-01\n{s}",
    ),
    Shape("vault", "hvs." + fake(URLSAFE, 95, "vault"), "VAULT_TOKEN={s} vault kv get secret/app"),
    Shape(
        "heroku",
        str(uuid.UUID(int=0x0F1E2D3C4B5A69788796A5B4C3D2E1F0)),
        "heroku config:set X=1\nHEROKU_API_KEY={s}",
    ),
    Shape(
        "new-relic",
        "NRAK-" + fake(string.ascii_uppercase + string.digits, 27, "nr"),
        "NEW_RELIC_API_KEY={s}",
    ),
    Shape("mailgun", "key-" + fake(HEX, 32, "mailgun"), "mailgun_api_key: {s}"),
    Shape(
        "x-api-key", fake(ALNUM, 32, "xapikey"), "curl -H 'x-api-key: {s}' https://api.example.com"
    ),
    Shape(
        "notion", "ntn_" + fake("0123456789", 11, "n1") + fake(ALNUM, 35, "n2"), "NOTION_TOKEN={s}"
    ),
    Shape("perplexity", "pplx-" + fake(ALNUM, 48, "pplx"), "PPLX_API_KEY={s}"),
    Shape("square", "EAAA" + fake(URLSAFE, 60, "square"), "SQUARE_ACCESS_TOKEN={s}"),
]


def _contexts(shape: Shape) -> list[tuple[str, str]]:
    """The shape's own text; in a tool's output; and as JSON text (a tool call's arguments)."""
    text = shape.text()
    return [
        ("as written", text),
        ("tool output", f"$ ./deploy.sh\nloading config...\n{text}\nExit code 0"),
        ("json", json.dumps({"command": text, "description": "run it"})),
    ]


def test_there_are_at_least_forty_shapes() -> None:
    assert len({s.name for s in SHAPES}) == len(SHAPES) >= 60


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
def test_each_secret_is_gone_in_each_context(shape: Shape) -> None:
    for where, text in _contexts(shape):
        assert shape.secret in text or json.dumps(shape.secret)[1:-1] in text
        redacted, counts = redact_kinds(text)
        escaped = json.dumps(shape.secret)[1:-1]
        assert shape.secret not in redacted, (where, redacted)
        assert escaped not in redacted, (where, redacted)
        assert counts and all(kind in secret_kinds() for kind in counts), (where, counts)
        assert sum(counts.values()) == redacted.count("[REDACTED:") - text.count("[REDACTED:")


def _kept_in_order(redacted: str, text: str) -> bool:
    """Whether the pieces of `redacted` between markers are pieces of `text`, in order: only
    spans were replaced."""
    at = 0
    for piece in MARKER.split(redacted):
        found = text.find(piece, at)
        if found < 0:
            return False
        at = found + len(piece)
    return True


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
def test_what_surrounds_a_secret_stays(shape: Shape) -> None:
    """Only secrets go: the text around them is unchanged, and the context's own words stay."""
    for _, text in _contexts(shape):
        redacted = redact(text)
        assert _kept_in_order(redacted, text)
    head, _, tail = shape.context.partition("{s}")
    words = [w for w in (head + " " + tail).split() if w.isalpha() and len(w) > 3]
    redacted = redact(shape.text())
    assert all(w in redacted for w in words), (words, redacted)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
def test_redaction_is_idempotent(shape: Shape) -> None:
    once = redact(shape.text())
    assert redact_kinds(once) == (once, {})


# ---------------------------------------------------------------------------------------------
# what must stay

SHA256 = hashlib.sha256(b"compactcli").hexdigest()
SHA1 = hashlib.sha1(b"compactcli").hexdigest()
PNG = base64.b64encode(bytes(range(256)) * 8).decode()

NOT_SECRETS = [
    f"sha256:{SHA256}",
    f"commit {SHA1}\nAuthor: Dana <dana@example.com>",
    f"git show {SHA1[:7]} && git log {SHA1}..HEAD",
    f'{{"sha1": "{SHA1}", "hash": "{SHA256}", "md5": "{hashlib.md5(b"x").hexdigest()}"}}',
    f"Successfully built {SHA256[:12]}\nSuccessfully tagged app:latest",
    f"integrity sha512-{base64.b64encode(hashlib.sha512(b'x').digest()).decode()}",
    f'{{"uuid": "{uuid.UUID(int=1)}", "parentUuid": "{uuid.UUID(int=2)}", '
    f'"sessionId": "{uuid.UUID(int=3)}"}}',
    f'{{"cache_key": "{uuid.UUID(int=4)}", "idempotency_key": "{uuid.UUID(int=5)}"}}',
    '{"id": "toolu_01A09q90qw90lq917835lq9", "tool_use_id": "toolu_01XGh3kY2VbWqLmN8pR4sT6u"}',
    '{"id": "msg_01AbCdEfGhIjKlMnOpQrStUv", "requestId": "req_011CQe5v4f9PqK2rXyZ8aB3c"}',
    '{"call_id": "call_Zx81kQ0aB3cD4eF5gH6iJ7kL", "id": "chatcmpl-9pQrStUvWxYz0123456789AbCd"}',
    f'{{"type": "image", "source": {{"type": "base64", "media_type": "image/png", "data": "{PNG}"}}}}',
    f"data:image/png;base64,{PNG}",
    "/home/dana/.ssh/id_rsa and src/auth/token.ts:12 and secrets/README.md",
    "/Users/dana/app/node_modules/.pnpm/@esbuild+darwin-arm64@0.21.5/node_modules/esbuild",
    "max_tokens: 4096, tokens_used=100, input_tokens: 5801, Original token count: 5801",
    "API_KEY=$OPENAI_API_KEY and SECRET=${SECRET} and TOKEN=%TOKEN% and PASSWORD=null",
    'api_key = os.environ["OPENAI_API_KEY"]; token = get_token(); secret = config.auth.secret',
    "password: ${DB_PASSWORD}\npassword: <your password>\npassword: ********",
    "echo $REGISTRY_TOKEN | docker login --password-stdin -u bob ghcr.io",
    "mkdir -p /tmp/out && ssh -p 2222 host && mysql -u root -p shop",
    "python -m pytest -p no:cacheprovider tests/test_auth.py",
    "const apiKey = await getApiKeyForModel(model);\nlet token: string | undefined;",
    '"@solana/spl-token": "^0.4.13", "jsonwebtoken": "9.0.2"',
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
    "git clone git@github.com:owner/repo.git; https://example.com/a:b/c; http://localhost:8080/x",
    "Authorization header is required for all endpoints",
    "GET /search?key=value&q=hello, /docs?key=authentication-overview&page=2",
    "The task-management system and risk-assessment-v2-final-draft are done.",
]


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_non_secrets_stay_byte_for_byte(text: str) -> None:
    assert redact_kinds(text) == (text, {})
    assert redact_kinds(json.dumps({"output": text})) == (json.dumps({"output": text}), {})


hex_ids = st.integers(min_value=0, max_value=2**256 - 1).map(lambda n: f"{n:064x}")
git_ids = st.integers(min_value=0, max_value=2**160 - 1).map(lambda n: f"{n:040x}")
uuids = st.uuids().map(str)
contexts = st.sampled_from(
    [
        "commit {}",
        '"id": "{}"',
        "sha256:{}",
        "key: {}",
        "token_id={}",
        "cache_key = {}",
        "/tmp/{}/out.json",
        "data:image/png;base64,{}",
        "{}",
    ]
)


@settings(max_examples=300, deadline=None)
@given(value=st.one_of(hex_ids, git_ids, uuids), context=contexts)
def test_hashes_and_ids_stay_in_any_context(value: str, context: str) -> None:
    text = context.format(value)
    assert redact(text) == text


@settings(max_examples=100, deadline=None)
@given(data=st.binary(min_size=48, max_size=600))
def test_base64_data_stays(data: bytes) -> None:
    text = '{"data": "' + base64.b64encode(data).decode() + '"}'
    assert redact(text) == text


# ---------------------------------------------------------------------------------------------
# the vendored rule set


def test_the_vendored_rules_say_where_they_come_from() -> None:
    source = gitleaks.source()
    assert source["project"] == "gitleaks"
    assert source["version"].startswith("v8.")
    assert len(source["sha256"]) == 64
    assert source["rules_used"] == len(gitleaks.rule_ids()) > 200
    assert source["rules_upstream"] >= source["rules_used"]
    assert source["rules_untranslatable"] == 0
    skipped = sum(len(ids) for ids in source["skipped"].values())
    assert source["rules_used"] + skipped == source["rules_upstream"]
    assert "generic-api-key" not in gitleaks.rule_ids()


def test_every_gitleaks_kind_is_listed() -> None:
    kinds = secret_kinds()
    assert len(kinds) == len(set(kinds))
    assert set(gitleaks.rule_ids()) <= set(kinds)
    assert {"password", "token", "api-key", "secret", "private-key"} <= set(kinds)


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("password", "hunter2", "[REDACTED:password]"),
        ("client_secret", "abcd1234xyz", "[REDACTED:secret]"),
        ("apiKey", "zq8Rw2LmN4", "[REDACTED:api-key]"),
        ("GITHUB_TOKEN", "opaque-value-77", "[REDACTED:token]"),
        ("password", "$DB_PASSWORD", "$DB_PASSWORD"),
        ("password", "<your password>", "<your password>"),
        ("token", "null", "null"),
        ("max_tokens", "4096", "4096"),
        ("secret_name", "prod/db", "prod/db"),
        ("command", "ls -la", "ls -la"),
        ("command", "export API_KEY=abc123xyz", "export API_KEY=[REDACTED:api-key]"),
    ],
)
def test_a_json_field_named_as_a_secret_loses_its_value(
    name: str, value: str, expected: str
) -> None:
    assert redact_named(name, value)[0] == expected
