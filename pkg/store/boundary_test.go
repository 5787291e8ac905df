package store

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// boundaryExempt are the packages still outside the boundary (AGENTS.md
// says so): none.
var boundaryExempt = map[string]bool{}

// TestNoPackageNamesABucket holds the store's boundary: no package of the
// module but store names a bucket (store.BucketX) or opens bbolt's buckets
// and cursors itself, in its non-test code. A record another package
// keeps gets a typed accessor in store instead.
func TestNoPackageNamesABucket(t *testing.T) {
	raw := map[string]bool{"Bucket": true, "CreateBucket": true, "CreateBucketIfNotExists": true,
		"DeleteBucket": true, "Cursor": true, "NextSequence": true}
	var found []string
	fset := token.NewFileSet()
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("..", path)
		if d.IsDir() {
			if rel == "store" || boundaryExempt[filepath.ToSlash(rel)] || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		bolt, storeName := "", ""
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			name := filepath.Base(p)
			if im.Name != nil {
				name = im.Name.Name
			}
			switch p {
			case "go.etcd.io/bbolt":
				bolt = name
			case "github.com/intermem/intermem/pkg/store":
				storeName = name
			}
		}
		if bolt == "" && storeName == "" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, isIdent := sel.X.(*ast.Ident)
			switch {
			case isIdent && storeName != "" && x.Name == storeName && strings.HasPrefix(sel.Sel.Name, "Bucket"):
			case bolt != "" && raw[sel.Sel.Name] && !(isIdent && x.Name != bolt && isPackage(f, x.Name)):
			default:
				return true
			}
			found = append(found, fset.Position(sel.Pos()).String()+": "+sel.Sel.Name)
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(found)
	for _, f := range found {
		t.Errorf("%s: outside the store's boundary (a typed accessor in pkg/store instead)", f)
	}
}

// isPackage reports whether name is a package f imports.
func isPackage(f *ast.File, name string) bool {
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		if im.Name != nil && im.Name.Name == name || im.Name == nil && filepath.Base(p) == name {
			return true
		}
	}
	return false
}
