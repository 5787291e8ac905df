package proof

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/intermem/intermem/pkg/inject"
)

// The bootstrap, measured. Two copies of one project, Harvest
// (testdata/bootstrap): in the first, CLAUDE.md holds everything by hand —
// identity, stack, conventions, PRD summary, where the work stands, the
// decisions with why (CLAUDE.full.md, about 3,400 tokens); in the second,
// CLAUDE.md is thin (CLAUDE.thin.md) and the same knowledge is held by
// intermem, put there with the real binaries (bootstrapSetup: phases with
// their closeouts, decisions, a saved checkpoint, memories). The test
// reports the tokens loaded into every session before and after — CLAUDE.md
// plus SessionStart's context, by the project's estimate (inject.Tokens) —
// and checks that each of the questions in bootstrapQuestions, written by
// hand with the text of their answer, is answered either by the SessionStart
// context or by the top three hits of one search (intermem search runs
// retrieve.SearchScoped, as memory_search does; a hit's text is the whole
// entry, as memory_get gives it). docs/bootstrap.md holds the figures.

// bootstrapSetup is how the knowledge of CLAUDE.full.md goes into intermem,
// command by command (each run with --project).
var bootstrapSetup = [][]string{
	{"phase", "start", "0", "--name", "setup"},
	{"phase", "close", "0", "--summary", "Monorepo, CI on GitHub Actions, Terraform for the staging environment."},
	{"phase", "start", "1", "--name", "discovery and PRD"},
	{"phase", "close", "1", "--summary", "Interviews with 12 members and 5 volunteers; the PRD in docs/prd.md was signed off by Riverside."},
	{"phase", "start", "2", "--name", "architecture"},
	{"phase", "close", "2",
		"--summary", "Produced the OpenAPI spec (docs/openapi.yaml), the data model and the threat model.",
		"--artifact", "docs/openapi.yaml",
		"--issue", "Stripe Connect onboarding for co-ops needs a legal entity per co-op.",
		"--decision", "FastAPI over Django for the backend",
		"--why", "the API is async end to end (Stripe, stock reservations) and the team wants typed request models; the back office does not need Django admin",
		"--decision", "PostgreSQL over MongoDB for the database",
		"--why", "orders, stock and slots are relational and need transactions; stock reservation uses SELECT … FOR UPDATE",
		"--decision", "JWT authentication with short-lived access tokens and rotating refresh tokens",
		"--why", "the mobile app must work on flaky depot Wi-Fi without a session store round trip",
		"--decision", "Stripe over Adyen for payments",
		"--why", "Stripe Connect gives each co-op its own payouts, and Riverside already uses Stripe for memberships",
		"--decision", "React Native (Expo) over Flutter for the mobile app",
		"--why", "the team already writes React and TypeScript; shared validation code with the web app",
		"--decision", "Multi-tenant by a coop_id column on every table with row-level security, not a schema per co-op",
		"--why", "migrations stay one run, and co-ops are small",
		"--decision", "Celery with Redis over AWS SQS for background jobs",
		"--why", "local development runs the whole stack in docker compose without AWS",
		"--decision", "UUIDv7 primary keys",
		"--why", "sortable by time, safe to expose in URLs",
	},
	{"phase", "start", "3", "--name", "build: catalogue and checkout"},
	{"decide", "Stock is reserved when checkout starts and released after 15 minutes without payment",
		"--why", "overselling produce was the co-op's worst complaint about the old spreadsheet"},
	{"decide", "No offline ordering in v1", "--why", "conflicting stock counts offline are worse than an error message"},
	{"checkpoint", "--summary", "The catalogue API and the web catalogue are done; checkout is in progress. " +
		"Stopped while merging guest carts into member carts at login (the cart merge in api/harvest/carts/merge.py); " +
		"next is the Stripe webhook for payment_intent.succeeded."},

	{"write", "--type", "insight", "--title", "What Harvest is", "--content",
		"Harvest is a mobile-first ordering platform for food co-operatives. Members browse the week's produce, fill a cart, pay, " +
			"and pick the order up at the co-op's depot on collection day; staff manage catalogue, stock and collection slots from a back office. " +
			"The first customer is the Riverside Food Co-op (about 1,800 member households). Multi-tenant from day one."},
	{"write", "--type", "insight", "--title", "Monorepo layout", "--content",
		"api/ is the backend, web/ the member web app and the back office, mobile/ the React Native app, infra/ Terraform, " +
			"docs/ the PRD, the OpenAPI spec and the architecture notes."},
	{"write", "--type", "insight", "--title", "Tech stack", "--content",
		"Backend: Python 3.12, FastAPI, SQLAlchemy 2.0 async, Pydantic v2. Database: PostgreSQL 16, migrations with Alembic " +
			"(every migration has a downgrade). Web: React 18, TypeScript, Vite; mobile: React Native (Expo); state through TanStack Query, no Redux. " +
			"Background jobs: Celery with Redis. Hosting: AWS (ECS Fargate, RDS, ElastiCache) with Terraform. Observability: OpenTelemetry traces to Honeycomb, JSON logs."},
	{"write", "--type", "insight", "--title", "Auth tokens", "--content",
		"JWT access tokens live 15 minutes; rotating refresh tokens 30 days, in an httpOnly cookie on the web and the secure keychain on mobile."},
	{"write", "--type", "insight", "--title", "Payments setup", "--content",
		"Payments use Stripe Payment Intents with a Stripe Connect account per co-op."},
	{"write", "--type", "style", "--title", "Money is integer cents", "--content",
		"Money is always integer cents (amount_cents: int) with an ISO 4217 currency code beside it; never floats, never Decimal in the API."},
	{"write", "--type", "style", "--title", "Timestamps in UTC", "--content",
		"Every timestamp is stored and sent in UTC (ISO 8601 with Z); the client converts to the co-op's time zone for display."},
	{"write", "--type", "style", "--title", "API errors and versions", "--content",
		"API errors use RFC 7807 problem+json bodies (type, title, status, detail), never bare strings. Routes are versioned under /v1/; a breaking change means /v2/."},
	{"write", "--type", "style", "--title", "Python tooling", "--content",
		"Python: ruff for lint and format, mypy --strict on api/, tests with pytest and pytest-asyncio, factories with factory_boy, never fixtures that hit the network."},
	{"write", "--type", "style", "--title", "TypeScript tooling", "--content",
		"TypeScript: strict mode, ESLint and Prettier; tests with Vitest and Testing Library; end-to-end tests with Playwright."},
	{"write", "--type", "style", "--title", "Branch names and commit messages", "--content",
		"Branches are named feat/<ticket>-<slug>, fix/<ticket>-<slug> or chore/<slug>. Commit messages follow Conventional Commits (feat(api): …). " +
			"Every pull request needs one review and green CI; squash merge only."},
	{"write", "--type", "style", "--title", "Database naming", "--content",
		"Database tables are plural snake_case (order_lines); primary keys are UUIDv7."},
	{"write", "--type", "style", "--title", "Feature flags and secrets", "--content",
		"Feature flags live in the flags table, read through api/harvest/flags.py; never hard-code a rollout. " +
			"Secrets come from AWS Secrets Manager; nothing secret in committed .env files."},
	{"write", "--type", "style", "--title", "Accessibility", "--content",
		"Every screen passes WCAG 2.2 AA; buttons have labels; colour is never the only signal."},
	{"write", "--type", "insight", "--title", "PRD: personas", "--content",
		"Co-op members order on their phone, mostly on Sunday evenings; many are older and use large text sizes. " +
			"Depot volunteers pack and hand over orders on collection day from a tablet. Co-op staff manage the catalogue, prices, stock and slots."},
	{"write", "--type", "insight", "--title", "PRD: features of v1", "--content",
		"Weekly catalogue with stock counts, published by staff each Friday. Cart and checkout with Stripe; an order holds at most 40 items. " +
			"Collection slots of 30 minutes with a capacity set by staff. Order changes allowed until the cut-off, Tuesday 20:00 local time. " +
			"Depot mode for volunteers: a pick list per slot and a QR code check-in. Household sharing, up to 4 members per household."},
	{"write", "--type", "insight", "--title", "PRD: notifications", "--content",
		"An email and a push notification when the order is confirmed, a reminder the evening before collection, and an SMS only when staff move a slot. " +
			"Members can switch each channel off except the confirmation."},
	{"write", "--type", "insight", "--title", "PRD: refunds", "--content",
		"A missing or spoiled item is refunded by depot volunteers from the pick list, item by item, to the original payment method; no store credit in v1. " +
			"A refund over 50 euros needs a staff member's approval."},
	{"write", "--type", "insight", "--title", "PRD: pricing", "--content",
		"Prices are set per co-op and per week; volunteers get a 10% discount applied at checkout, never in catalogue prices. VAT is included in displayed prices and itemised on the receipt."},
	{"write", "--type", "insight", "--title", "PRD: out of scope for v1", "--content",
		"Out of scope for v1: home delivery and delivery routing, loyalty points, a marketplace of third-party sellers, native tablet apps (depot mode is a web app)."},
	{"write", "--type", "insight", "--title", "PRD: success metrics", "--content",
		"Checkout conversion above 70% of started carts; median checkout under 90 seconds on mobile; fewer than 1% of orders changed by staff after the cut-off."},
	{"write", "--type", "insight", "--title", "Supported platforms", "--content",
		"iOS 16 and later, Android 10 and later, the last two versions of the evergreen browsers."},
	{"write", "--type", "insight", "--title", "Glossary", "--content",
		"Co-op: a tenant (coop_id on every row). Household: up to 4 member accounts sharing a cart. Slot: a 30-minute collection window with a capacity. " +
			"Cut-off: Tuesday 20:00 local time. Pick list: what volunteers pack for one slot, grouped by storage zone (ambient, chilled, frozen). " +
			"Reservation: stock held for a cart during checkout, 15 minutes at most."},
	{"write", "--type", "insight", "--title", "Architecture: bounded contexts", "--content",
		"api/harvest/ is split by bounded context: catalogue, carts, orders, payments, slots, accounts, depot. A context never imports another's models; it calls its service functions."},
	{"write", "--type", "insight", "--title", "Architecture: tenancy per request", "--content",
		"Every request carries the co-op from the subdomain (riverside.harvest.coop); middleware sets app.coop_id for row-level security before any query."},
	{"write", "--type", "insight", "--title", "Architecture: Stripe webhooks", "--content",
		"Stripe webhooks land on /v1/payments/webhooks, are verified by signature, stored in payment_events and processed idempotently by event id."},
	{"write", "--type", "insight", "--title", "Architecture: background tasks", "--content",
		"Celery tasks are idempotent and retried with exponential backoff, at most 5 tries; a task that fails for good raises a PagerDuty alert. " +
			"Web and mobile share packages/validation (zod schemas generated from the OpenAPI spec)."},
	{"write", "--type", "insight", "--title", "Environments and deployment", "--content",
		"Local (docker compose), staging (deployed on every merge to main), production (deployed by a tagged release vYYYY.MM.N). " +
			"Migrations run as a separate ECS task before the new API takes traffic and must be backward compatible; rollback is a redeploy of the previous tag, " +
			"migrations are fixed forward, never rolled back in production."},
	{"write", "--type", "style", "--title", "Testing guidance", "--content",
		"API tests run against a real PostgreSQL in docker (testcontainers), never SQLite; Stripe is faked with stripe-mock. " +
			"Every bug fix starts with a failing test. The checkout and stock code must have tests for every branch of the reservation logic."},
	{"write", "--type", "insight", "--title", "Team and working agreements", "--content",
		"Three backend developers, two frontend, one mobile, a half-time designer; the product owner is Riverside's operations lead. " +
			"Demos to Riverside every second Thursday; backlog in Linear (project HRV). Definition of done: merged, on staging, demoed, OpenAPI and PRD updated. " +
			"Screens use web/src/ui components only. Changes under api/harvest/payments/ need the payments owner's review (CODEOWNERS)."},
	{"write", "--type", "insight", "--title", "Performance budgets", "--content",
		"API p95 under 300 ms; member web app under 250 KB of gzipped JavaScript; the mobile app starts in under 2 seconds on a mid-range Android phone."},
	{"write", "--type", "insight", "--title", "Make targets", "--content",
		"make dev starts the stack in docker compose; make test runs pytest, Vitest and the linters; make e2e runs Playwright; make migrate applies the Alembic migrations; make seed loads the Riverside sample catalogue."},
}

// bootstrapQuestions are questions a session asks about Harvest, each with
// the words it would search by and the text of the answer (matched
// case-insensitively), written by hand from CLAUDE.full.md.
var bootstrapQuestions = []struct{ question, query, answer string }{
	{"Which phase is the work in?", "current phase", "build: catalogue and checkout"},
	{"Where did the last session stop?", "last session checkout progress", "merging guest carts into member carts"},
	{"What is next in the work?", "next step checkout", "Stripe webhook for payment_intent.succeeded"},
	{"Why is stock reserved at checkout?", "why reserve stock at checkout", "overselling produce"},
	{"Is there offline ordering?", "offline ordering", "No offline ordering in v1"},
	{"Which backend framework, and why not Django?", "why FastAPI over Django", "async end to end"},
	{"Why PostgreSQL rather than MongoDB?", "why PostgreSQL database", "need transactions"},
	{"How long does an access token live?", "access token lifetime JWT", "access tokens live 15 minutes"},
	{"Why Stripe over Adyen?", "why Stripe payments", "Stripe Connect gives each co-op its own payouts"},
	{"How is multi-tenancy done?", "multi-tenant co-op tenancy", "row-level security"},
	{"How is money represented?", "money amounts representation", "integer cents"},
	{"Which error format does the API use?", "API error response format", "RFC 7807"},
	{"How are branches named?", "branch naming", "feat/<ticket>-<slug>"},
	{"Which commit message style?", "commit message style", "Conventional Commits"},
	{"What runs the Python tests?", "python tests framework", "pytest and pytest-asyncio"},
	{"How are database migrations managed?", "database migrations", "migrations with Alembic"},
	{"What is out of scope for v1?", "out of scope v1", "delivery routing"},
	{"What is the checkout conversion target?", "success metrics conversion", "above 70%"},
	{"How many items can an order hold?", "order maximum items", "at most 40 items"},
	{"When is the order cut-off?", "order change cut-off", "Tuesday 20:00"},
	{"Which iOS versions are supported?", "supported platforms iOS", "iOS 16"},
	{"Who is the first customer?", "first customer co-op", "Riverside Food Co-op"},
	{"What did phase 2 produce?", "phase 2 architecture closeout", "OpenAPI spec"},
	{"What issue did phase 2 meet?", "Stripe Connect onboarding issue", "legal entity per co-op"},
	{"Which refunds need approval?", "refund approval", "over 50 euros"},
	{"How are timestamps stored?", "timestamps time zone", "stored and sent in UTC"},
	{"What do API tests run against?", "API tests database", "testcontainers"},
	{"What is the API latency budget?", "performance budget API latency", "300 ms"},
}

// TestBootstrap measures always-loaded tokens with a full CLAUDE.md and with
// a thin one plus intermem, and checks that every question is answered by
// the bootstrap or one search.
func TestBootstrap(t *testing.T) {
	full := readBootstrap(t, "CLAUDE.full.md")
	thin := readBootstrap(t, "CLAUDE.thin.md")

	before := newFixture(t, map[string]string{"CLAUDE.md": full}, nil)
	beforeCtx := sessionStartContext(t, before)
	after := newFixture(t, map[string]string{"CLAUDE.md": thin}, nil)
	// A minute between commands, as between a person's commands: the
	// order of records is their order in time.
	clock, err := time.Parse(time.RFC3339, after.now)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range bootstrapSetup {
		clock = clock.Add(time.Minute)
		after.now = clock.Format(time.RFC3339)
		after.must("intermem", append(args, "--project", after.root)...)
	}
	after.now = clock.Add(time.Hour).Format(time.RFC3339)
	ctx := sessionStartContext(t, after)
	if ctx == "" {
		t.Fatal("SessionStart gave no context for the project intermem holds")
	}

	beforeTokens := inject.Tokens(full) + inject.Tokens(beforeCtx)
	afterTokens := inject.Tokens(thin) + inject.Tokens(ctx)
	t.Logf("always loaded before: CLAUDE.md %d tokens + SessionStart %d = %d", inject.Tokens(full), inject.Tokens(beforeCtx), beforeTokens)
	t.Logf("always loaded after:  CLAUDE.md %d tokens + SessionStart %d = %d (%.0f%% fewer)",
		inject.Tokens(thin), inject.Tokens(ctx), afterTokens, 100*float64(beforeTokens-afterTokens)/float64(beforeTokens))
	t.Logf("SessionStart context after:\n%s", ctx)

	norm := func(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
	inBootstrap, bySearch := 0, 0
	for _, q := range bootstrapQuestions {
		want := norm(q.answer)
		if strings.Contains(norm(ctx), want) {
			inBootstrap++
			t.Logf("%-45s bootstrap", q.question)
			continue
		}
		r := after.must("intermem", "search", q.query, "--limit", "3", "--json", "--project", after.root)
		var res struct {
			Results []struct{ Title, Text, Source string } `json:"results"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
			t.Fatalf("search %q: %v\n%s", q.query, err, r.stdout)
		}
		found := -1
		for i, h := range res.Results {
			if strings.Contains(norm(h.Title+"\n"+h.Text), want) {
				found = i
				break
			}
		}
		if found < 0 {
			var titles []string
			for _, h := range res.Results {
				titles = append(titles, h.Source+": "+h.Title)
			}
			t.Errorf("%s (search %q): %q is neither in the SessionStart context nor in the top 3 hits %q", q.question, q.query, q.answer, titles)
			continue
		}
		bySearch++
		t.Logf("%-45s search hit %d", q.question, found+1)
	}
	t.Logf("%d questions: %d answered by the bootstrap, %d by one search (top 3)", len(bootstrapQuestions), inBootstrap, bySearch)
	if len(bootstrapQuestions) < 20 {
		t.Errorf("%d questions; the measurement asks at least 20", len(bootstrapQuestions))
	}
	if afterTokens*2 > beforeTokens {
		t.Errorf("always-loaded tokens after (%d) are more than half of before (%d)", afterTokens, beforeTokens)
	}
}

func readBootstrap(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "bootstrap", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sessionStartContext runs the SessionStart hook of a new session in f and
// returns its additionalContext ("" when it printed nothing).
func sessionStartContext(t *testing.T, f *fixture) string {
	t.Helper()
	r := f.run(payload(t, "SessionStart.startup.interactive.json", "bootstrap-session", f.root), nil, "intermem-inject")
	if r.code != 0 {
		t.Fatalf("intermem-inject: exit %d\n%s", r.code, r.stderr)
	}
	if err := checkSessionStartOutput(r.stdout); err != nil {
		t.Fatal(err)
	}
	if r.stdout == "" {
		return ""
	}
	var out struct {
		HookSpecificOutput struct {
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("intermem-inject: %v\n%s", err, r.stdout)
	}
	return out.HookSpecificOutput.AdditionalContext
}
