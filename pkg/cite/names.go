package cite

import (
	"errors"
	"strings"

	"github.com/intermem/intermem/pkg/lazy"
)

// knownExt lists file extensions (lower case) that make a base name a file.
// Top-level domains that are not also common extensions (com, org, io, dev)
// are deliberately absent, so "example.com" is not read as a file.
var knownExt = lazy.NewSet(
	// Go, C family, systems
	"go", "mod", "sum", "work", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx", "m", "mm",
	"rs", "zig", "nim", "swift", "kt", "kts", "java", "scala", "groovy", "gradle",
	"cs", "csproj", "fsproj", "vbproj", "sln", "fs", "fsi", "fsx", "vb", "dart",
	"cu", "cuh", "metal", "glsl", "hlsl", "wgsl", "vert", "frag", "asm", "ld", "sol",
	// scripting
	"py", "pyi", "pyx", "pxd", "ipynb", "rb", "erb", "rake", "gemspec", "ru", "php", "pl", "pm",
	"lua", "r", "rmd", "qmd", "rproj", "jl", "ex", "exs", "erl", "hrl", "hs", "lhs", "cabal",
	"ml", "mli", "clj", "cljs", "cljc", "edn", "el", "vim", "scm", "rkt", "lisp", "fnl",
	"elm", "purs", "cr", "tcl", "sh", "bash", "zsh", "fish", "ps1", "psm1", "psd1", "bat", "cmd",
	"awk", "applescript", "gd",
	// web
	"js", "mjs", "cjs", "jsx", "ts", "tsx", "mts", "cts", "vue", "svelte", "astro", "coffee",
	"html", "htm", "xhtml", "css", "scss", "sass", "less", "styl", "wasm", "map",
	"hbs", "mustache", "ejs", "pug", "haml", "liquid", "njk", "twig", "tmpl", "tpl", "j2",
	"jinja", "jinja2", "gotmpl", "templ",
	// data and config
	"json", "jsonc", "json5", "jsonl", "ndjson", "yaml", "yml", "toml", "ini", "cfg", "conf",
	"config", "env", "properties", "xml", "xsd", "xsl", "xslt", "plist", "csv", "tsv",
	"parquet", "avro", "avsc", "proto", "thrift", "graphql", "gql", "sql", "prisma", "db",
	"sqlite", "sqlite3", "lock", "log", "pid", "tf", "tfvars", "hcl", "nix", "dhall", "cue",
	"jsonnet", "libsonnet", "bzl", "bazel", "star", "mk", "cmake", "ninja", "in", "am", "ac",
	"http", "rest", "ron", "kdl", "hjson", "editorconfig", "service", "socket", "timer",
	"desktop", "rules", "pbtxt", "textproto", "xaml", "resx", "pbxproj", "entitlements",
	"xcconfig", "storyboard", "xib", "modulemap", "podspec", "opam", "dune",
	// docs
	"md", "mdx", "markdown", "rst", "txt", "adoc", "asciidoc", "org", "tex", "bib", "pdf",
	"docx", "xlsx", "pptx", "odt", "rtf", "txtar", "golden", "snap", "feature",
	// media and binaries
	"png", "jpg", "jpeg", "gif", "svg", "webp", "ico", "icns", "bmp", "tiff", "avif",
	"mp3", "mp4", "wav", "ogg", "webm", "mov", "ttf", "otf", "woff", "woff2", "eot",
	"zip", "tar", "gz", "tgz", "bz2", "xz", "zst", "7z", "jar", "war", "whl", "gem", "deb",
	"rpm", "dmg", "exe", "dll", "so", "dylib", "bin", "dat", "pb", "onnx", "pt", "pth",
	"ckpt", "safetensors", "h5", "pkl", "pickle", "npy", "npz", "feather", "arrow",
	"pem", "crt", "cer", "key", "pub", "der", "p12", "pfx", "csr", "patch", "diff",
	"bats", "tape", "cast", "excalidraw", "drawio", "puml", "mermaid", "mmd", "dot",
)

// knownDotfiles are dotfile and dot-directory names (without the dot) common
// enough to be cited bare.
var knownDotfiles = lazy.NewSet(
	"env", "git", "github", "gitlab", "gitignore", "gitattributes", "gitmodules", "gitconfig",
	"vscode", "idea", "claude", "cursor", "codex", "venv", "config", "cache", "local", "ssh",
	"husky", "changeset", "devcontainer", "beads", "next", "nuxt", "turbo", "yarn", "cargo",
	"terraform", "npmrc", "nvmrc", "editorconfig", "dockerignore", "profile", "bashrc",
	"zshrc", "intermem", "circleci", "storybook", "vercel", "netlify", "docker", "mcp",
)

// knownNames are base names that are files without an extension.
var knownNames = lazy.NewSet(
	"Makefile", "makefile", "GNUmakefile", "Dockerfile", "Containerfile", "Jenkinsfile",
	"Vagrantfile", "Gemfile", "Rakefile", "Procfile", "Brewfile", "Justfile", "justfile",
	"Taskfile", "Snakefile", "Earthfile", "Tiltfile", "Caddyfile", "Pipfile", "Podfile",
	"Fastfile", "Appfile", "Guardfile", "Berksfile", "Puppetfile", "Cakefile", "Gopkg",
	"LICENSE", "LICENCE", "COPYING", "README", "CHANGELOG", "CHANGES", "AUTHORS",
	"CONTRIBUTORS", "CODEOWNERS", "NOTICE", "VERSION", "BUILD", "WORKSPACE", "OWNERS",
	"MAINTAINERS", "PATENTS", "gradlew", "mvnw", "configure",
)

// errEscape is returned by pathUnescape for a "%" not followed by two hex
// digits.
var errEscape = errors.New("invalid percent escape")

// pathUnescape is url.PathUnescape: every %XX decoded, "+" left as it is.
// It is here so that this package, which every hook links, does not link
// net/url and, through it, net/netip, whose initialisation every hook
// process paid.
func pathUnescape(s string) (string, error) {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s, nil
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		if s[i] != '%' {
			b = append(b, s[i])
			continue
		}
		if i+2 >= len(s) || unhex(s[i+1]) < 0 || unhex(s[i+2]) < 0 {
			return "", errEscape
		}
		b = append(b, byte(unhex(s[i+1])<<4|unhex(s[i+2])))
		i += 2
	}
	return string(b), nil
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return int(c - 'A' + 10)
	}
	return -1
}
