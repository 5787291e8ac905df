package redact

import "testing"

func TestCredentialPairs(t *testing.T) {
	for in, want := range map[string]string{
		"- Auth: admin@jakeos.local / Jake@2024!":           "- Auth: admin@jakeos.local / [REDACTED:password]",
		"Login: deploy:S3cret-99-xyz":                       "Login: deploy:[REDACTED:password]",
		"**Credentials** — ops / hunter2!":                  "**Credentials** — ops / [REDACTED:password]",
		"Auth: JWT / OAuth":                                 "Auth: JWT / OAuth",
		"Login: /login / /logout":                           "Login: /login / /logout",
		"Account: acme / see the vault":                     "Account: acme / see the vault",
		"auth: required / optional":                         "auth: required / optional",
		"The login flow: user / session handling":           "The login flow: user / session handling",
		"Auth: token via https://auth.example.com/callback": "Auth: token via https://auth.example.com/callback",
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}
