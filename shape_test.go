package devbulk_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/devbulk/devbulk/devices"
)

// eachSource parses every Go file outside tests below the module (but for
// the folders skip names) and calls fn with it.
func eachSource(t *testing.T, skip []string, fn func(path string, fset *token.FileSet, f *ast.File)) {
	t.Helper()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || slices.Contains(skip, path)) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		fn(path, fset, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The code's shape, as CONTRIBUTING.md asks it: no function outside tests
// longer than 80 lines (40 in the command line, which only parses and
// prints), and none with more than five parameters (group them in a
// struct).
func TestFunctionShape(t *testing.T) {
	eachSource(t, nil, func(path string, fset *token.FileSet, f *ast.File) {
		most := 80
		if strings.HasPrefix(path, "cmd/") {
			most = 40
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var typ *ast.FuncType
			var body *ast.BlockStmt
			name := "a function literal"
			switch fn := n.(type) {
			case *ast.FuncDecl:
				typ, body, name = fn.Type, fn.Body, fn.Name.Name
			case *ast.FuncLit:
				typ, body = fn.Type, fn.Body
			default:
				return true
			}
			if body == nil {
				return true
			}
			at := fset.Position(typ.Pos())
			if lines := fset.Position(body.End()).Line - at.Line + 1; lines > most {
				t.Errorf("%s:%d: %s is %d lines long (at most %d)", path, at.Line, name, lines, most)
			}
			params := 0
			for _, p := range typ.Params.List {
				params += max(1, len(p.Names))
			}
			if params > 5 {
				t.Errorf("%s:%d: %s takes %d parameters (at most 5: group them in a struct)", path, at.Line, name, params)
			}
			return true
		})
	})
}

// Kind facts live in package devices: no code elsewhere compares a value
// with a kind's name (== "veth", case "vxlan"); it asks the kind instead.
func TestNoKindComparedByName(t *testing.T) {
	names := devices.Names()
	isKind := func(e ast.Expr) bool {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return false
		}
		s, err := strconv.Unquote(lit.Value)
		return err == nil && slices.Contains(names, s)
	}
	eachSource(t, []string{"devices", "tests", "nlbatch/nlbatchtest"}, func(path string, fset *token.FileSet, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if (n.Op == token.EQL || n.Op == token.NEQ) && (isKind(n.X) || isKind(n.Y)) {
					t.Errorf("%s: a kind compared by name", fset.Position(n.Pos()))
				}
			case *ast.CaseClause:
				for _, e := range n.List {
					if isKind(e) {
						t.Errorf("%s: a kind compared by name", fset.Position(e.Pos()))
					}
				}
			}
			return true
		})
	})
}

// No source file outside tests over 600 lines: one job a file (issue 38).
func TestFileLength(t *testing.T) {
	eachSource(t, nil, func(path string, fset *token.FileSet, f *ast.File) {
		if n := fset.File(f.Pos()).LineCount(); n > 600 {
			t.Errorf("%s is %d lines long (at most 600): split it by job", path, n)
		}
	})
}
