package main

import (
	"testing"
	"time"

	"github.com/devbulk/devbulk/runs"
)

func TestAge(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		ago  time.Duration
		want string
	}{
		{0, "0s"}, {-3 * time.Second, "0s"}, {59 * time.Second, "59s"}, {61 * time.Second, "1m1s"},
		{3*time.Hour + 12*time.Minute + 5*time.Second, "3h12m"}, {50 * time.Hour, "2d2h"},
	} {
		if got := age(now.Add(-c.ago), now); got != c.want {
			t.Errorf("age %v: %q, want %q", c.ago, got, c.want)
		}
	}
	if got := age(time.Time{}, now); got != "-" {
		t.Errorf("age of a record that does not say: %q", got)
	}
}

func TestWhere(t *testing.T) {
	one := runs.Listed{Netns: runs.Side{Netns: "a", Devices: 3}, State: runs.Complete}
	split := one
	split.To = &runs.Side{Netns: "b", Devices: 2, Gone: true}
	moving := split
	moving.State = runs.Moving
	for l, want := range map[*runs.Listed]string{&one: "a", &split: "a (3) + b (gone) (2)", &moving: "a -> b (gone)"} {
		if got := where(*l); got != want {
			t.Errorf("where %+v: %q, want %q", *l, got, want)
		}
	}
}
