// Package registry holds named entries that each register themselves from
// their own file's init (a delete or move strategy, a bystander
// operation), listed in one fixed order: by each entry's rank, then by
// name.
package registry

import (
	"cmp"
	"maps"
	"slices"
	"strings"
)

// Registry is one kind of entry, by name.
type Registry[K ~string, V any] struct {
	what    string
	rank    func(V) int
	entries map[K]V
}

// New is an empty registry of what ("delete strategy", for a panic's
// words); rank orders the list (nil: by name alone).
func New[K ~string, V any](what string, rank func(V) int) *Registry[K, V] {
	return &Registry[K, V]{what: what, rank: rank, entries: map[K]V{}}
}

// Add registers v as name, once: a second registration of a name is a
// programming error, and panics.
func (r *Registry[K, V]) Add(name K, v V) {
	if _, ok := r.entries[name]; ok {
		panic(r.what + " registered twice: " + string(name))
	}
	r.entries[name] = v
}

// Get is the entry registered as name.
func (r *Registry[K, V]) Get(name K) (V, bool) {
	v, ok := r.entries[name]
	return v, ok
}

// At is the entry registered as name, or V's zero value (nil, for a
// pointer) when there is none.
func (r *Registry[K, V]) At(name K) V { return r.entries[name] }

// Names lists the names, by rank, then by name.
func (r *Registry[K, V]) Names() []K {
	out := slices.Collect(maps.Keys(r.entries))
	slices.SortFunc(out, func(a, b K) int {
		by := 0
		if r.rank != nil {
			by = r.rank(r.entries[a]) - r.rank(r.entries[b])
		}
		return cmp.Or(by, strings.Compare(string(a), string(b)))
	})
	return out
}

// List is Names joined for a message ("serial, pipelined, group").
func (r *Registry[K, V]) List() string {
	var s []string
	for _, n := range r.Names() {
		s = append(s, string(n))
	}
	return strings.Join(s, ", ")
}
