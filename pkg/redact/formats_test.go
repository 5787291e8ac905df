package redact

import (
	"strings"
	"testing"
)

type redactCase struct {
	name, in, want string
}

// formatCases has one case per secret format: a realistic memory line built around a
// generated fake value, and the exact redacted line.
func formatCases() []redactCase {
	f := fake
	ghBody := f("gh", alnumA, 36)
	return []redactCase{
		// AWS
		{"aws-access-key", "- AWS key id for the deploy user: AKIA" + f("akia", updA, 16),
			"- AWS key id for the deploy user: [REDACTED:aws-access-key]"},
		{"aws-sts-key", "- temp creds key id ASIA" + f("asia", updA, 16) + " expires hourly",
			"- temp creds key id [REDACTED:aws-access-key] expires hourly"},
		{"aws-secret-labelled", "aws_secret_access_key = " + f("awss", b64A, 40),
			"aws_secret_access_key = [REDACTED:aws-secret-key]"},
		{"aws-secret-env", "export AWS_SECRET_ACCESS_KEY=" + f("awss2", b64A, 40),
			"export AWS_SECRET_ACCESS_KEY=[REDACTED:aws-secret-key]"},
		{"aws-secret-prose", "- Secret access key: " + f("awss3", b64A, 40) + " (rotated 2026-05-01)",
			"- Secret access key: [REDACTED:aws-secret-key] (rotated 2026-05-01)"},
		{"aws-secret-pair", "- CI user: AKIA" + f("akia2", updA, 16) + " / " + f("awss4", b64A, 40),
			"- CI user: [REDACTED:aws-access-key] / [REDACTED:aws-secret-key]"},
		{"aws-presigned", "GET https://b.s3.amazonaws.com/k?X-Amz-Expires=300&X-Amz-Signature=" + f("sig", hexA, 64),
			"GET https://b.s3.amazonaws.com/k?X-Amz-Expires=300&X-Amz-Signature=[REDACTED:aws-presigned-signature]"},

		// GitHub / GitLab
		{"github-ghp", "- Push token: ghp_" + ghBody, "- Push token: [REDACTED:github-token]"},
		{"github-gho", "oauth token gho_" + f("gho", alnumA, 36) + " from gh auth", "oauth token [REDACTED:github-token] from gh auth"},
		{"github-ghu", "GH_TOKEN=ghu_" + f("ghu", alnumA, 36), "GH_TOKEN=[REDACTED:github-token]"},
		{"github-ghs", "app installation token: `ghs_" + f("ghs", alnumA, 36) + "`", "app installation token: `[REDACTED:github-token]`"},
		{"github-ghr", "refresh ghr_" + f("ghr", alnumA, 76), "refresh [REDACTED:github-token]"},
		{"github-pat", "- fine-grained PAT github_pat_" + f("pat1", alnumA, 22) + "_" + f("pat2", alnumA, 59) + " (repo scope)",
			"- fine-grained PAT [REDACTED:github-token] (repo scope)"},
		{"git-remote-set-url", "git remote set-url origin https://x-access-token:ghs_" + f("ghs2", alnumA, 36) + "@github.com/acme/api.git",
			"git remote set-url origin https://x-access-token:[REDACTED:github-token]@github.com/acme/api.git"},
		{"git-remote-token-user", "git clone https://ghp_" + ghBody + "@github.com/acme/api.git",
			"git clone https://[REDACTED:github-token]@github.com/acme/api.git"},
		{"gitlab-pat", "- GitLab API: glpat-" + f("glpat", urlA, 20), "- GitLab API: [REDACTED:gitlab-token]"},

		// Slack
		{"slack-bot", "SLACK_BOT_TOKEN=xoxb-" + f("sb1", digitA, 12) + "-" + f("sb2", digitA, 13) + "-" + f("sb3", alnumA, 24),
			"SLACK_BOT_TOKEN=[REDACTED:slack-token]"},
		{"slack-user", "- user token xoxp-" + f("sp1", digitA, 12) + "-" + f("sp2", digitA, 12) + "-" + f("sp3", digitA, 13) + "-" + f("sp4", hexA, 32),
			"- user token [REDACTED:slack-token]"},
		{"slack-app", "legacy xoxa-2-" + f("sa", alnumA, 40), "legacy [REDACTED:slack-token]"},
		{"slack-webhook", "- alerts go to https://hooks.slack.com/services/T" + f("w1", updA, 8) + "/B" + f("w2", updA, 10) + "/" + f("w3", alnumA, 24),
			"- alerts go to https://hooks.slack.com/services/[REDACTED:slack-webhook]"},

		// Stripe
		{"stripe-live", "STRIPE_SECRET_KEY=sk_live_" + f("skl", alnumA, 24), "STRIPE_SECRET_KEY=[REDACTED:stripe-key]"},
		{"stripe-restricted", "- restricted key rk_live_" + f("rkl", alnumA, 24) + " for reporting", "- restricted key [REDACTED:stripe-key] for reporting"},
		{"stripe-test", "test mode: sk_test_" + f("skt", alnumA, 24), "test mode: [REDACTED:stripe-key]"},

		// AI providers
		{"openai-legacy", "OPENAI_API_KEY=sk-" + f("oai", alnumA, 48), "OPENAI_API_KEY=[REDACTED:openai-key]"},
		{"openai-project", "- OpenAI key: sk-proj-" + f("oaip", urlA, 120) + " (project billing)",
			"- OpenAI key: [REDACTED:openai-key] (project billing)"},
		{"anthropic-api", "ANTHROPIC_API_KEY=\"sk-ant-api03-" + f("ant", urlA, 93) + "AA\"", "ANTHROPIC_API_KEY=\"[REDACTED:anthropic-key]\""},
		{"anthropic-admin", "- admin key sk-ant-admin01-" + f("anta", urlA, 93) + "AA", "- admin key [REDACTED:anthropic-key]"},
		{"huggingface", "- HF token hf_" + f("hf", alnumA, 34) + " for gated models", "- HF token [REDACTED:huggingface-token] for gated models"},
		{"openrouter", "or key sk-or-v1-" + f("or", hexA, 64), "or key [REDACTED:openrouter-key]"},
		{"replicate", "REPLICATE_API_TOKEN=r8_" + f("r8", alnumA, 37), "REPLICATE_API_TOKEN=[REDACTED:replicate-token]"},
		{"groq", "groq gsk_" + f("gsk", alnumA, 52), "groq [REDACTED:groq-key]"},

		// Google
		{"google-api-key", "- Maps key AIza" + f("aiza", urlA, 35) + " (restricted to our domain)",
			"- Maps key [REDACTED:google-api-key] (restricted to our domain)"},
		{"google-oauth-secret", "client secret is GOCSPX-" + f("gocspx", urlA, 28), "client secret is [REDACTED:google-oauth-secret]"},
		{"google-oauth-token", "access ya29." + f("ya29", urlA, 60), "access [REDACTED:google-oauth-token]"},
		{"gcp-service-account", `{"type": "service_account", "private_key_id": "` + f("pkid", hexA, 40) +
			`", "private_key": "-----BEGIN PRIVATE KEY-----\n` + f("pk1", b64A, 64) + `\n` + f("pk2", b64A, 40) +
			`==\n-----END PRIVATE KEY-----\n", "client_email": "ci@acme.iam.gserviceaccount.com"}`,
			`{"type": "service_account", "private_key_id": "[REDACTED:private-key-id]", "private_key": "[REDACTED:private-key]", "client_email": "ci@acme.iam.gserviceaccount.com"}`},

		// PEM private keys: the whole block.
		{"pem-rsa", "- deploy key:\n" + pemBlock("RSA PRIVATE KEY", "rsa", 3) + "\n- next", "- deploy key:\n[REDACTED:private-key]\n- next"},
		{"pem-ec", "```\n" + pemBlock("EC PRIVATE KEY", "ec", 2) + "\n```", "```\n[REDACTED:private-key]\n```"},
		{"pem-openssh", "  " + pemBlock("OPENSSH PRIVATE KEY", "ossh", 4), "  [REDACTED:private-key]"},
		{"pem-pkcs8", pemBlock("PRIVATE KEY", "p8", 2), "[REDACTED:private-key]"},
		{"pem-encrypted", pemBlock("ENCRYPTED PRIVATE KEY", "enc", 2) + "\npassphrase in vault", "[REDACTED:private-key]\npassphrase in vault"},
		{"pem-pgp", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n" + f("pgp1", b64A, 64) + "\n=" + f("pgp2", b64A, 4) + "\n-----END PGP PRIVATE KEY BLOCK-----",
			"[REDACTED:private-key]"},
		{"pem-truncated", "-----BEGIN RSA PRIVATE KEY-----\n" + f("tr1", b64A, 64) + "\n" + f("tr2", b64A, 64) + "\n\n## Next section",
			"[REDACTED:private-key]\n\n## Next section"},

		// JWT
		{"jwt", "- staging session: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ" + f("jwtp", urlA, 40) + "." + f("jwts", urlA, 43),
			"- staging session: [REDACTED:jwt]"},
		{"jwt-bearer", "curl -H 'Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.eyJ" + f("jwtp2", urlA, 60) + "." + f("jwts2", urlA, 86) + "' https://api.acme.dev/v1",
			"curl -H 'Authorization: Bearer [REDACTED:jwt]' https://api.acme.dev/v1"},

		// Credentials in URLs
		{"url-https", "- mirror https://deploy:" + "Tr0ub4dor-" + f("u1", alnumA, 6) + "@git.acme.dev/x", "- mirror https://deploy:[REDACTED:url-credentials]@git.acme.dev/x"},
		{"url-postgres", "DATABASE_URL=postgres://app:" + f("pg", alnumA, 16) + "@db.internal:5432/app?sslmode=require",
			"DATABASE_URL=postgres://app:[REDACTED:url-credentials]@db.internal:5432/app?sslmode=require"},
		{"url-postgres-at-sign", "postgresql://admin:P@ss" + f("pg2", alnumA, 8) + "@10.0.0.5/prod", "postgresql://admin:[REDACTED:url-credentials]@10.0.0.5/prod"},
		{"url-mysql", "mysql://root:" + f("my", alnumA, 12) + "@localhost:3306/shop", "mysql://root:[REDACTED:url-credentials]@localhost:3306/shop"},
		{"url-mongodb-srv", "- Atlas: `mongodb+srv://svc:" + f("mg", alnumA, 20) + "@cluster0.ab1cd.mongodb.net/?retryWrites=true`",
			"- Atlas: `mongodb+srv://svc:[REDACTED:url-credentials]@cluster0.ab1cd.mongodb.net/?retryWrites=true`"},
		{"url-redis", "REDIS_URL=redis://default:" + f("rd", alnumA, 24) + "@redis-123.cloud.io:6379", "REDIS_URL=redis://default:[REDACTED:url-credentials]@redis-123.cloud.io:6379"},
		{"url-amqp", "amqp://worker:" + f("mq", alnumA, 14) + "@rabbit:5672/vhost", "amqp://worker:[REDACTED:url-credentials]@rabbit:5672/vhost"},
		{"url-git", "git://bot:" + f("gitp", alnumA, 12) + "@git.internal/repo.git", "git://bot:[REDACTED:url-credentials]@git.internal/repo.git"},

		// Labelled passwords and secrets in prose, YAML, JSON, env files, flags.
		{"password-prose", "- Admin password: Summer" + f("pw1", digitA, 4) + "!x", "- Admin password: [REDACTED:password]"},
		{"password-bold", "- **DB password:** `" + f("pw2", alnumA, 14) + "`", "- **DB password:** `[REDACTED:password]`"},
		{"password-yaml", "  password: '" + f("pw3", alnumA, 16) + "'", "  password: '[REDACTED:password]'"},
		{"password-json", `{"user": "svc", "password": "` + f("pw4", alnumA, 18) + `"}`, `{"user": "svc", "password": "[REDACTED:password]"}`},
		{"password-env", "DB_PASSWORD=" + f("pw5", alnumA, 12), "DB_PASSWORD=[REDACTED:password]"},
		{"passwd-eq", "passwd=" + f("pw6", alnumA, 10) + " in /etc/app.conf", "passwd=[REDACTED:password] in /etc/app.conf"},
		{"pwd-colon", "ftp pwd: " + f("pw7", alnumA, 10), "ftp pwd: [REDACTED:password]"},
		{"password-flag-eq", "./admin --password=" + f("pw8", alnumA, 12) + " --user root", "./admin --password=[REDACTED:password] --user root"},
		{"password-flag-space", "vault login --token " + "s-" + f("pw9", alnumA, 20), "vault login --token [REDACTED:token]"},
		{"mysql-p-quoted", "mysql -u root -p'" + f("pw10", alnumA, 10) + "' shop", "mysql -u root -p'[REDACTED:password]' shop"},
		{"mysql-p-attached", "mysqldump -uroot -p" + f("pw11", alnumA, 10) + " shop > dump.sql", "mysqldump -uroot -p[REDACTED:password] shop > dump.sql"},
		{"sshpass", "sshpass -p '" + f("pw12", alnumA, 12) + "' ssh pi@10.0.0.9", "sshpass -p '[REDACTED:password]' ssh pi@10.0.0.9"},
		{"curl-user", "curl -u admin:" + f("pw13", alnumA, 12) + " https://ci.acme.dev/api", "curl -u admin:[REDACTED:password] https://ci.acme.dev/api"},
		{"netrc", "machine api.acme.dev login bot password " + f("pw14", alnumA, 16), "machine api.acme.dev login bot password [REDACTED:password]"},
		{"secret-label", "SESSION_SECRET=" + f("sec1", hexA, 32), "SESSION_SECRET=[REDACTED:secret]"},
		{"client-secret", "- client_secret: " + f("cs", urlA, 32), "- client_secret: [REDACTED:client-secret]"},
		{"token-label", "- Deploy token: " + f("tok", alnumA, 32), "- Deploy token: [REDACTED:token]"},
		{"api-key-prose", "- API key: " + f("ak", alnumA, 32), "- API key: [REDACTED:api-key]"},
		{"api-key-snake", "api_key=" + f("ak2", hexA, 32), "api_key=[REDACTED:api-key]"},
		{"apikey-yaml", "apikey: " + f("ak3", alnumA, 24), "apikey: [REDACTED:api-key]"},
		{"api-key-camel", "const apiKey = \"" + f("ak4", alnumA, 30) + "\";", "const apiKey = \"[REDACTED:api-key]\";"},
		{"x-api-key-header", "-H 'X-API-Key: " + f("ak5", alnumA, 40) + "'", "-H 'X-API-Key: [REDACTED:api-key]'"},
		{"token-query", "GET /v1/items?access_token=" + f("qt", alnumA, 30) + "&limit=5", "GET /v1/items?access_token=[REDACTED:token]&limit=5"},
		{"npm-authtoken", "//registry.npmjs.org/:_authToken=" + f("npmrc", alnumA, 36) + "-x", "//registry.npmjs.org/:_authToken=[REDACTED:token]"},
		{"heroku-uuid", "HEROKU_API_KEY=" + f("h1", hexA, 8) + "-" + f("h2", hexA, 4) + "-" + f("h3", hexA, 4) + "-" + f("h4", hexA, 4) + "-" + f("h5", hexA, 12),
			"HEROKU_API_KEY=[REDACTED:api-key]"},
		{"heroku-hrku", "heroku HRKU-" + f("hrku", urlA, 60), "heroku [REDACTED:heroku-key]"},
		{"private-key-hex", "- wallet private key: 0x" + f("wal", hexA, 64), "- wallet private key: [REDACTED:private-key]"},
		{"korean-password", "- 관리자 비밀번호: " + f("ko", alnumA, 12) + " (공유 금지)", "- 관리자 비밀번호: [REDACTED:password] (공유 금지)"},
		{"spanish-contrasena", "- contraseña= " + f("es", alnumA, 12), "- contraseña= [REDACTED:password]"},
		{"portuguese-senha-colon", "- Senha: " + f("pt2", alnumA, 12), "- Senha: [REDACTED:password]"},
		{"chinese-password", "- 数据库密码：" + f("zh", alnumA, 12) + "（不要提交）", "- 数据库密码：[REDACTED:password]（不要提交）"},
		{"japanese-password", "パスワード: " + f("ja", alnumA, 12), "パスワード: [REDACTED:password]"},
		{"app-password", `- Gmail app password: "` + "abcd efgh ijkl mnop" + `"`, `- Gmail app password: "[REDACTED:password]"`},
		{"truncated-value", "- token: " + f("trv", alnumA, 12) + "…", "- token: [REDACTED:token]…"},

		// HTTP authorization
		{"bearer", "Authorization: Bearer " + f("bear", alnumA, 40), "Authorization: Bearer [REDACTED:bearer-token]"},
		{"bearer-opaque", "use `Bearer " + f("bear2", urlA, 32) + "` for the admin API", "use `Bearer [REDACTED:bearer-token]` for the admin API"},
		{"basic", "Authorization: Basic YWRtaW46" + "aHVudGVyMjAyNSE=", "Authorization: Basic [REDACTED:basic-auth]"},
		{"authorization-token", `"Authorization": "token ` + f("aut", alnumA, 40) + `"`, `"Authorization": "token [REDACTED:authorization]"`},

		// Package registries and developer platforms
		{"npm", "- npm publish token npm_" + f("npm", alnumA, 36), "- npm publish token [REDACTED:npm-token]"},
		{"pypi", "TWINE_PASSWORD=pypi-AgEIcHlwaS5vcmc" + f("pypi", urlA, 70), "TWINE_PASSWORD=[REDACTED:pypi-token]"},
		{"dockerhub", "docker hub dckr_pat_" + f("dckr", urlA, 27), "docker hub [REDACTED:dockerhub-token]"},
		{"postman", "- Postman PMAK-" + f("pm1", hexA, 24) + "-" + f("pm2", hexA, 34), "- Postman [REDACTED:postman-key]"},
		{"linear", "LINEAR_API_KEY=lin_api_" + f("lin", alnumA, 40), "LINEAR_API_KEY=[REDACTED:linear-key]"},
		{"notion-secret", "notion integration secret_" + f("not", alnumA, 43), "notion integration [REDACTED:notion-token]"},
		{"notion-ntn", "NOTION_TOKEN=ntn_" + f("ntn", alnumA, 46), "NOTION_TOKEN=[REDACTED:notion-token]"},
		{"supabase", "- supabase CLI token sbp_" + f("sbp", hexA, 40), "- supabase CLI token [REDACTED:supabase-token]"},
		{"atlassian", "jira ATATT3xFfGF0" + f("atl", urlA, 170), "jira [REDACTED:atlassian-token]"},
		{"figma", "figd_" + f("figd", urlA, 40), "[REDACTED:figma-token]"},
		{"sentry-org", "SENTRY_AUTH_TOKEN=sntrys_eyJ" + f("sntry", urlA, 60), "SENTRY_AUTH_TOKEN=[REDACTED:sentry-token]"},

		// Messaging and communications
		{"twilio-api-key", "- Twilio API key SK" + f("tsk", hexA, 32), "- Twilio API key [REDACTED:twilio-api-key]"},
		{"twilio-account-and-token", "- Twilio AC" + f("tac", hexA, 32) + " auth token: " + f("tat", hexA, 32),
			"- Twilio [REDACTED:twilio-account-sid] auth token: [REDACTED:token]"},
		{"sendgrid", "SENDGRID_API_KEY=SG." + f("sg1", urlA, 22) + "." + f("sg2", urlA, 43), "SENDGRID_API_KEY=[REDACTED:sendgrid-key]"},
		{"mailgun", "- mailgun key-" + f("mgk", hexA, 32), "- mailgun [REDACTED:mailgun-key]"},
		{"mailchimp", "mailchimp " + f("mc", hexA, 32) + "-us21", "mailchimp [REDACTED:mailchimp-key]"},
		{"discord-bot", "- Discord bot: " + discordToken("dsc"), "- Discord bot: [REDACTED:discord-token]"},
		{"discord-webhook", "https://discord.com/api/webhooks/123456789012345678/" + f("dwh", urlA, 68), "https://discord.com/api/webhooks/123456789012345678/[REDACTED:discord-webhook]"},
		{"telegram", "- bot https://api.telegram.org/bot123456789:AA" + f("tg", urlA, 33) + "/sendMessage",
			"- bot https://api.telegram.org/bot[REDACTED:telegram-bot-token]/sendMessage"},

		// Commerce and payments
		{"shopify-access", "SHOPIFY_TOKEN=shpat_" + f("shp", hexA, 32), "SHOPIFY_TOKEN=[REDACTED:shopify-token]"},
		{"shopify-shared", "shared secret shpss_" + f("shs", hexA, 32), "shared secret [REDACTED:shopify-token]"},
		{"square", "square sq0csp-" + f("sq", urlA, 43), "square [REDACTED:square-token]"},

		// Infrastructure
		{"digitalocean", "DIGITALOCEAN_TOKEN=dop_v1_" + f("do", hexA, 64), "DIGITALOCEAN_TOKEN=[REDACTED:digitalocean-token]"},
		{"vault-service", "VAULT_TOKEN=hvs." + f("hvs", urlA, 90), "VAULT_TOKEN=[REDACTED:vault-token]"},
		{"vault-batch", "- batch token hvb." + f("hvb", urlA, 120), "- batch token [REDACTED:vault-token]"},
		{"doppler-service", "DOPPLER_TOKEN=dp.st.prd." + f("dpst", alnumA, 40), "DOPPLER_TOKEN=[REDACTED:doppler-token]"},
		{"doppler-personal", "doppler dp.pt." + f("dppt", alnumA, 43), "doppler [REDACTED:doppler-token]"},
		{"databricks", "- Databricks PAT dapi" + f("dapi", hexA, 32), "- Databricks PAT [REDACTED:databricks-token]"},
		{"azure-storage", "AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=acmedata;AccountKey=" + f("azk", b64A, 86) + "==;EndpointSuffix=core.windows.net",
			"AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=acmedata;AccountKey=[REDACTED:azure-storage-key];EndpointSuffix=core.windows.net"},
		{"azure-sas", "https://acme.blob.core.windows.net/c/f.zip?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-01-01T00:00:00Z&sig=" + f("sas", alnumA, 40) + "%3D",
			"https://acme.blob.core.windows.net/c/f.zip?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-01-01T00:00:00Z&sig=[REDACTED:azure-sas]"},
		{"age", "AGE-SECRET-KEY-1" + f("age", updA, 58), "[REDACTED:age-secret-key]"},
		{"tailscale", "TS_AUTHKEY=tskey-auth-" + f("ts1", alnumA, 12) + "-" + f("ts2", alnumA, 30), "TS_AUTHKEY=[REDACTED:tailscale-key]"},
		{"pulumi", "pulumi pul-" + f("pul", hexA, 40), "pulumi [REDACTED:pulumi-token]"},
		{"terraform", "TFE_TOKEN=" + f("tfe", alnumA, 14) + ".atlasv1." + f("tfe2", urlA, 67), "TFE_TOKEN=[REDACTED:terraform-token]"},
		{"grafana", "grafana glsa_" + f("gsa", alnumA, 32) + "_" + f("gsa2", hexA, 8), "grafana [REDACTED:grafana-token]"},
		{"newrelic", "NEW_RELIC_API_KEY=NRAK-" + f("nr", updA, 27), "NEW_RELIC_API_KEY=[REDACTED:newrelic-key]"},
		{"flyio", "fly tokens: fo1_" + f("fly", urlA, 43), "fly tokens: [REDACTED:flyio-token]"},
		{"planetscale", "pscale_tkn_" + f("ps", urlA, 43), "[REDACTED:planetscale-token]"},
		{"mapbox", "MAPBOX_SECRET=sk.eyJ1Ijoi" + f("mb1", urlA, 40) + "." + f("mb2", urlA, 22), "MAPBOX_SECRET=[REDACTED:mapbox-token]"},
		{"meta", "- Meta page token EAA" + f("meta", alnumA, 120), "- Meta page token [REDACTED:meta-token]"},

		// Prose: the label and its value in a sentence, without ":" or "=".
		{"prose-password-is", "- The staging DB password is " + f("ppi", alnumA, 14), "- The staging DB password is [REDACTED:password]"},
		{"prose-password-for-is", "- The password for the staging DB is " + f("ppf", alnumA, 12) + ".", "- The password for the staging DB is [REDACTED:password]."},
		{"prose-password-was", "- root password was `" + f("ppw", alnumA, 12) + "` until May", "- root password was `[REDACTED:password]` until May"},
		{"prose-password-code-span", "- password `" + f("pcs", alnumA, 12) + "`", "- password `[REDACTED:password]`"},
		{"prose-token-is", "- The token is " + f("pti", alnumA, 20), "- The token is [REDACTED:token]"},
		{"prose-token-set-to", "- CI token set to " + f("pts", alnumA, 20) + " last week", "- CI token set to [REDACTED:token] last week"},
		{"prose-api-key-is-hex", "- The API key is " + f("pak", hexA, 32), "- The API key is [REDACTED:api-key]"},
		{"prose-api-key-bare", "- Exa API key " + f("pakb", alnumA, 32) + " (research agents)", "- Exa API key [REDACTED:api-key] (research agents)"},
		{"secret-key-base", "SECRET_KEY_BASE=" + f("skb", hexA, 64), "SECRET_KEY_BASE=[REDACTED:secret]"},
		{"redis-cli-a", "redis-cli -h cache.internal -a " + f("rcli", alnumA, 14) + " ping", "redis-cli -h cache.internal -a [REDACTED:password] ping"},
		{"redis-cli-a-quoted", "redis-cli -a '" + f("rcli2", alnumA, 10) + "' --no-auth-warning", "redis-cli -a '[REDACTED:password]' --no-auth-warning"},
		{"aws-secret-blank", "- Secret access key " + f("awsb", b64A, 40) + " (deploy user)", "- Secret access key [REDACTED:aws-secret-key] (deploy user)"},
		{"aws-secret-is", "- the AWS secret is " + f("awsi", b64A, 40), "- the AWS secret is [REDACTED:aws-secret-key]"},
		{"pgpass", "PGPASS=" + f("pgp", alnumA, 12), "PGPASS=[REDACTED:password]"},
		{"dbpass", "- DBPASS: " + f("dbp", alnumA, 12), "- DBPASS: [REDACTED:password]"},
		{"okta-ssws", "- Okta: SSWS 00" + f("okta", urlA, 40), "- Okta: SSWS [REDACTED:okta-token]"},
		{"okta-header", "Authorization: SSWS 00" + f("okta2", urlA, 40), "Authorization: SSWS [REDACTED:okta-token]"},
		{"discord-bot-shape", "- release bot logs in with " + discordToken("dsc2"), "- release bot logs in with [REDACTED:discord-token]"},
		{"pem-body-line", "- MIIEowIBAAKCAQEA" + f("der", b64A, 48), "- [REDACTED:private-key]"},
		{"pem-body-pkcs8", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + f("der8", b64A, 32), "[REDACTED:private-key]"},
		{"pem-body-openssh", "  b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAAB" + f("dero", b64A, 12), "  [REDACTED:private-key]"},
		{"pem-in-bullets", "- key:\n- -----BEGIN RSA PRIVATE KEY-----\n- MIIEowIBAAKCAQEA" + f("pb1", b64A, 48) + "\n- " + f("pb2", b64A, 64) +
			"\n- " + f("pb3", b64A, 20) + "==\n- -----END RSA PRIVATE KEY-----\n- next", "- key:\n- [REDACTED:private-key]\n- next"},
		{"pem-bullets-truncated", "- -----BEGIN RSA PRIVATE KEY-----\n- " + f("pt1", b64A, 64) + "\n- " + f("pt2", b64A, 64) + "\n\nNext",
			"- [REDACTED:private-key]\n\nNext"},
		{"aws-pair-labelled", "- creds: AKIA" + f("akp", updA, 16) + ":" + f("akps", b64A, 40), "- creds: [REDACTED:aws-access-key]"},
		{"aws-pair-account", "- s3 account: AKIA" + f("akq", updA, 16) + ":" + f("akqs", alnumA, 12), "- s3 account: [REDACTED:aws-access-key]:[REDACTED:password]"},
	}
}

func TestFormats(t *testing.T) {
	cases := formatCases()
	if len(cases) < 30 {
		t.Fatalf("only %d format cases", len(cases))
	}
	kinds := map[string]bool{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := String(c.in)
			if got != c.want {
				t.Errorf("String(%q)\n got %q\nwant %q\nfindings %v", c.in, got, c.want, Find(c.in))
			}
			if !Has(c.in) {
				t.Errorf("Has(%q) = false", c.in)
			}
			if again := String(got); again != got {
				t.Errorf("not idempotent: %q -> %q", got, again)
			}
		})
		for _, f := range Find(c.in) {
			kinds[f.Kind] = true
		}
	}
	t.Logf("%d cases, %d distinct kinds", len(cases), len(kinds))
}

// TestFindOffsets checks that Start/End delimit the value only, not its label.
func TestFindOffsets(t *testing.T) {
	v := fake("off", alnumA, 20)
	s := "- API key: " + v + " (prod)"
	fs := Find(s)
	if len(fs) != 1 || fs[0].Kind != "api-key" || s[fs[0].Start:fs[0].End] != v {
		t.Fatalf("Find(%q) = %v, want one api-key finding on %q", s, fs, v)
	}
	pem := pemBlock("RSA PRIVATE KEY", "off", 2)
	s = "x\n" + pem + "\ny"
	fs = Find(s)
	if len(fs) != 1 || s[fs[0].Start:fs[0].End] != pem {
		t.Fatalf("PEM finding %v does not cover exactly the block", fs)
	}
}

func TestNegatives(t *testing.T) {
	cases := []string{
		// Identifiers and hashes that look random but are not secrets.
		"- fixed in commit 0223a0c, see 023da2680f0079623c41a2c037ef4ba2e623cb1a",
		"originSessionId: bd976eeb-1b2c-4d5e-8f90-a1b2c3d4e5f6",
		"- **Root cause**: the lock file <!-- intermem:0123456789abcdef -->",
		"### Git Credential Lock <!-- intermem:8ed6945e -->",
		"sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		"- session_id: 7f3c2a10-9b8e-4d6f-a5c4-3e2d1f0a9b8c (resume with --resume)",
		"docs/solutions/environment-issues/git-credential-lock-multi-user-20260216.md",
		"- [SQLite reads auto-approved](feedback_no_sqlite_prompts.md) — run sqlite3 on mydb.db",
		"request id: AbCdEf0123456789GhIjKl, trace 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"- 2026-05-24T19:29:56.864Z updated; version 0.11.1; build 20260524",
		// Paths, URLs without credentials, e-mail.
		"- Token file: `~/.claude/secrets/token.txt`",
		"- API key lives in /etc/acme/api.key",
		"- secret: secrets/prod.env",
		"see https://github.com/browser-use/browser-use.git@main and https://cloud.browser-use.com/new-api-key",
		"proxy: http://host:8080, git@github.com:acme/api.git, ssh://git@github.com/acme/api",
		"- account: slowly008@gmail.com",
		// Placeholders and references.
		"- API key: <your-key>",
		"API_KEY=${API_KEY}",
		"token: $GITHUB_TOKEN",
		"password: ***",
		"password: ********",
		"api_key: xxxxxxxxxxxxxxxx",
		"secret: [REDACTED:secret]",
		"DB_PASSWORD=changeme",
		"OPENAI_API_KEY=your_openai_api_key_here",
		"token: {{ secrets.DEPLOY_TOKEN }}",
		"password: %DB_PASSWORD%",
		"apiKey: process.env.STRIPE_KEY",
		"\"Authorization\": \"Bearer ...\"",
		"Authorization: Bearer <token>",
		"- Token: `TELEGRAM_BOT_TOKEN`",
		"- Token env: `TELEGRAM_TOKEN_PESSOAL`",
		"api_key = settings.OPENAI_API_KEY",
		"key: sk-...abcd",
		"postgres://user:password@localhost:5432/db",
		"amqp://guest:guest@localhost:5672/",
		"postgres://${DB_USER}:${DB_PASS}@db:5432/app",
		// Ordinary prose and code.
		"- the token is stored in the macOS keychain",
		"- max_tokens: 4096, input_tokens: 120000",
		"- Second pass: refactored everything",
		"- `password='pass'` and `password=\"proxy-pass\"` in the proxy example",
		"| `ADMIN_EMAIL` / `ADMIN_PASSWORD` | Login credentials |",
		"FormattingService Provides Basic Table Format Without Dates",
		"Bearer tokens are checked by the gateway",
		"git push -u origin main && mkdir -p /tmp/x && docker run -u 1000:1000 img",
		"- token: refreshToken (see auth.ts)",
		"- API key: configured via environment",
		"- page_token: CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA",
		"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJ8mX3q9Kp2vQzL4T5wE7rYb6nH1cU0dF2gA3sB4xC5y user@host",
		"-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----",
		"-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBa\n-----END CERTIFICATE-----",
		"pk_live_" + "51H8x2KLmNopQrStUvWxYz (publishable, safe to ship)",
		"- 시크릿: `~/.claude/secrets\\` (git 범위 밖, 토큰 보관)",
		"- 시크릿 3대 원칙: 하드코딩 금지, 대화창 노출 금지, 깃 푸시 금지",
		"- **存档价值**：方便 recall，避免重复生成，节省时间和 token",
		"- Função `rodar_bot(token_env, prompt_sistema, namespace, nome)`",
		"- senha: ver cofre da equipe",
		"key: value",
		"- Key insight: always pin versions",
		"primary key: id, sort key: created_at",
		"public key: AAAAC3NzaC1lZDI1NTE5",
		"SMARTLING_USER_SECRET_ARN - AWS Secrets Manager ARN",
		"cache-key-" + "0123456789abcdef0123456789abcdef",
		"`sk-learn` and scikit-learn-intelex",
		// Prose that names a secret without holding one.
		"- The password is in 1Password",
		"- password is stored in the team vault",
		"- pass `-count=1` to go test, and pass `--timeout=30s` too",
		"- the token is valid for 24 hours",
		"- The API key is read from `OPENAI_API_KEY`",
		"- password `changeme` is the default",
		"- The password for staging is the same as prod",
		"- the secret is to keep tests hermetic",
		"- token refresh fixed in 023da2680f0079623c41a2c037ef4ba2e623cb1a",
		"- API key rotation happens every 90 days",
		"- The token for CI is generated by `scripts/token.sh`",
		"- bypass: Xk9mPq2vLz12, compass=Nn12Ee34Ss56",
		"- MIGRATION_ID=20260514120000 and the mii channel",
		"-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\n-----END CERTIFICATE-----",
		"MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0",
		"- docs: see README.md.Then run.tests.now.please.ok",
		"- SECRET_NAME=prod/db and TOKEN_URL=https://auth.acme.dev/token",
		"- redis-cli -a $REDIS_PASSWORD ping",
	}
	for _, s := range cases {
		if fs := Find(s); len(fs) != 0 {
			var vals []string
			for _, f := range fs {
				vals = append(vals, f.Kind+":"+s[f.Start:f.End])
			}
			t.Errorf("Find(%q) = %v, want none", s, strings.Join(vals, ", "))
		}
		if got := String(s); got != s {
			t.Errorf("String changed %q to %q", s, got)
		}
	}
}

// TestSpecExamples pins the output shapes the package contract promises.
func TestSpecExamples(t *testing.T) {
	key := fake("spec", alnumA, 32)
	pass := fake("spec-pw", alnumA, 14)
	for in, want := range map[string]string{
		"API key: " + key:                      "API key: [REDACTED:api-key]",
		"https://user:" + pass + "@host/x":     "https://user:[REDACTED:url-credentials]@host/x",
		"http://user:" + pass + "@host:8080/x": "http://user:[REDACTED:url-credentials]@host:8080/x",
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMemoryFile redacts a whole MEMORY.md-shaped file: every secret goes, every other
// line stays byte for byte (CRLF included).
func TestMemoryFile(t *testing.T) {
	recs := readSecrets(t)
	var in, want strings.Builder
	in.WriteString("# Memory\r\n\r\n## Ops\r\n")
	want.WriteString("# Memory\r\n\r\n## Ops\r\n")
	for i, r := range recs {
		plain := "- fact " + strings.Repeat("x", i%7) + " see `pkg/a.go:12`, commit 0223a0c <!-- intermem:0123456789abcdef -->\r\n"
		in.WriteString(plain)
		want.WriteString(plain)
		in.WriteString(r.line + "\r\n")
		want.WriteString(String(r.line) + "\r\n")
	}
	got := String(in.String())
	if got != want.String() {
		t.Fatalf("whole-file redaction differs from line-by-line redaction")
	}
	for _, r := range recs {
		if strings.Contains(got, r.secret) {
			t.Errorf("secret of secrets.txt:%d survives", r.lineNo)
		}
	}
}
