// Package redact finds and removes secrets from memory text before it crosses intermem's
// trust boundary: the store, a plan, a target document, the archive, the log, or the context
// injected into a session. Private auto-memory collects live credentials (push tokens, API
// keys, JWTs, passwords, "git remote set-url https://user:token@…" commands); promotion
// copies it into committed files.
//
// # What is detected
//
// Shaped tokens, recognised anywhere by prefix and form: AWS access key ids (AKIA/ASIA/ABIA/
// ACCA) and secret keys (labelled, or a 40-character base64 run on the same line as a key
// id), S3 presigned signatures; GitHub ghp_/gho_/ghu_/ghs_/ghr_ and github_pat_; GitLab glpat-
// and friends; Slack xox?- tokens, xapp- tokens and hooks.slack.com webhooks; Stripe sk_/rk_
// live and test keys and whsec_; OpenAI sk-/sk-proj-/sk-svcacct-, Anthropic sk-ant-api03-/
// sk-ant-admin01-, OpenRouter, Groq, xAI, Perplexity, Hugging Face hf_, Replicate r8_;
// Google AIza keys, GOCSPX- client secrets, ya29./1//0 OAuth tokens; service-account JSON
// "private_key" and "private_key_id"; PEM private keys of every type (RSA, EC, DSA, OPENSSH,
// ENCRYPTED, PKCS#8, PGP blocks), whole block, multi-line (also written as list items, one
// line per bullet), JSON-escaped, or truncated, and the first line of a key's base64 body
// on its own (MII…IBAA/IBAD, MIG…AgEA, MHcCAQEE, MC4CAQAwBQYDK2Vw, OpenSSH b3BlbnNzaC1rZXktdjE);
// age secret keys; JWTs (eyJ….eyJ….sig) and Mapbox sk.eyJ tokens; npm_, PyPI pypi-AgE…,
// Docker Hub dckr_pat_, Atlassian ATATT3…, Postman PMAK-, Linear lin_api_, Figma figd_,
// Sentry sntrys_/sntryu_, Notion secret_/ntn_, Supabase sbp_/sb_secret_; Twilio SK…/AC…
// ids, SendGrid SG.x.y, Mailgun key-…, Mailchimp …-usNN, Discord bot tokens by shape alone
// (id.timestamp.hmac; the id part must decode to digits) and webhooks, Telegram bot tokens
// (123456789:AA…, also after "bot" in API URLs); Shopify shpat_/shpss_/shpca_/shppa_,
// Square sq0csp-/sq0atp-, Meta EAA…; DigitalOcean dop_v1_, HashiCorp Vault hvs./hvb./hvr.,
// Doppler dp.st./dp.pt./…, Databricks dapi…, Azure AccountKey=/SharedAccessKey= and SAS
// sig=, Okta "SSWS <token>", Heroku HRKU-, Tailscale tskey-, Pulumi pul-, Terraform Cloud ….atlasv1.…, Grafana
// glsa_/glc_, New Relic NRAK-, Fly.io fo1_/fm2_, PlanetScale pscale_….
//
// Credentials by context: the password in scheme://user:password@host for any scheme
// (http, https, git, postgres, mysql, mongodb+srv, redis, amqp, …) and a token used as the
// user name (https://<token>@host); Authorization headers (Bearer, Basic when the base64
// decodes to user:password, "token …"); curl -u user:password; mysql/mariadb -p'x' and -px,
// sshpass and docker login -p x; redis-cli -a x; .netrc "machine … password x".
//
// Labelled values: a value after a key-like label in prose, markdown, YAML, JSON, TOML, env
// files, code and command-line flags ("Push token: …", "**DB password:** `…`",
// "DB_PASSWORD=…", `"client_secret": "…"`, "apiKey = '…'", "--password=…", "--token …",
// "?access_token=…&"), and in prose: "The staging DB password is X", "the password for
// the staging DB was `X`", "password `X`", "The API key is <32 hex>", and a bare value
// with a strong shape right after its label ("Secret access key <40 bytes>", "Exa API key
// <32 bytes>"). A label is key-like when its last word is password/passwd/pwd/pass/
// passphrase/passcode/credentials/creds (or a run-together PGPASS, DBPASS, SMTPPASS),
// secret (client secret → client-secret), token (except page/next/max/input/csrf/…
// tokens), or key after api/access/secret/private/encryption/signing/license/… (a bare
// "key:" is not); a last word that names the value's form (SECRET_KEY_BASE, TOKEN_VALUE,
// KEY_HEX) is looked through; camelCase, snake_case, kebab-case and
// SCREAMING_CASE are split into words. Labels in other languages: senha, contraseña,
// passwort, kennwort, wachtwoord, пароль, 비밀번호, 암호, 토큰, 密码/密碼, 口令, 密钥, 令牌,
// パスワード, トークン (CJK labels match as a suffix: 数据库密码).
//
// File names have no labels: Name searches a name from every word start (names join words
// with "_", "-", "."), and also redacts a word that is random on its own (12+ bytes of three
// classes switching often, 32+ bytes of hex, 20+ bytes of two classes at 4 bits per byte).
//
// # False-positive policy
//
// Shaped tokens are trusted by their shape, with boundary checks (no word character may
// touch the value, so "xghp_…" or a hash that merely starts with "SK" is not a match) and a
// few content checks (OpenAI and Hugging Face bodies must mix character classes; Slack
// tokens must carry digits; a Discord token's first part must decode to a numeric id).
//
// A value found only through its label must look like a secret (see plausible): at least 8
// bytes; not a placeholder or reference (<your-key>, ${TOKEN}, $API_KEY, %X%, {{ x }},
// process.env.X, settings.SECRET_KEY, op://…, masks such as xxxx, ****, sk-...abcd, and the
// words changeme, your_key_here, example, none, required, …); not a path or file name, URL,
// e-mail address, date, version or number; not an environment variable name
// (TELEGRAM_BOT_TOKEN) or identifier (refreshToken, proxy-pass, configured); and then either
// two character classes among lower, upper, digit and symbol, or digits only, or a long
// (≥ 16) single-case run of letters. "changeme" is treated as a placeholder: it names a
// well-known default, not a secret, and redacting it would only add noise. Quoted multi-word
// values count only as a Gmail-style app password (four groups of four letters) or when
// they mix three classes. URL passwords and other unambiguous credential positions use a
// lenient policy: any non-placeholder value of 3–6+ bytes, except user:user defaults such as
// guest:guest and host:port look-alikes.
//
// Prose is looser about where a value is, so it is stricter about what a value is. "is" and
// "was" are everywhere: the value they introduce must also hold a digit (or be strong), and
// the bare verb "pass" ("pass `-count=1`") and labels inside identifiers never own a prose
// value. A bare value needs a strong shape: at least 16 bytes of a token alphabet (letters,
// digits, - _ . ~ + / =, so code like "func(*ecdh.PrivateKey" is not one) and high Shannon
// entropy: hex of 32 bytes or more, or three classes at 3.5 bits per byte, or two at 4.
// Password managers ("the password is in 1Password") are references, not values.
//
// Not detected: unlabelled high-entropy strings (SHAs, UUIDs, base64 ids and our 16-hex
// markers are left alone by design), values on the line after their label, values shorter
// than 8 bytes or longer than 512 bytes after a label, secrets that are all-lowercase words,
// prose passwords without a digit ("the password is correcthorse"), the base64 lines of a PEM
// body after its first when its BEGIN line is not in the same text (package automem scans a
// memory file whole, so a key split over several entries is found there), and PEM blocks
// longer than 64 KiB (the part after 64 KiB is treated as a truncated block).
//
// # Guarantees
//
//   - Find returns findings sorted by Start, non-overlapping, within bounds, each covering
//     the secret value only (the label and the surrounding text stay).
//   - String replaces every finding with "[REDACTED:<kind>]", is idempotent, and its result
//     has no findings: a finding that touches marker text is dropped, so markers never nest
//     ("creds: [REDACTED:aws-access-key]" is not read as user:password).
//   - Work is linear in the input. One Aho–Corasick pass over the ASCII-case-folded text
//     finds every rule anchor; a rule then runs only there: hand-written matchers (labels,
//     URLs, PEM blocks) at the anchor, anchored RE2 expressions on at most 1 KiB after it,
//     unanchored ones on windows at least 1 KiB apart, and contextual rules on the anchor's
//     line (or 17 KiB windows of a line over 32 KiB). Scans that could repeat (the value
//     run after many labels, the closing quote, the PEM END line) are memoised per call.
package redact
