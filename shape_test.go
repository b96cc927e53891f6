package devbulk

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// The code's shape, as CONTRIBUTING.md asks it: no function outside tests
// longer than 80 lines (40 in the command line, which only parses and
// prints), and none with more than five parameters (group them in a
// struct).
func TestFunctionShape(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
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
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
