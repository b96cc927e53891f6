package main

import (
	"github.com/urfave/cli/v2"

	"github.com/devbulk/devbulk/bystander"
)

// bystanderFlag runs a prober in a namespace of its own beside a bench, a
// create, a move or a churn (package bystander).
var bystanderFlag = &cli.StringFlag{Name: "bystander", Usage: "beside the work, a prober in a throwaway namespace of its own issues `OP[@RATE]` " +
	"(operations a second, 1..10000), open loop, and says what it waited against its idle baseline: " + bystander.Help()}

// influenceFlag measures what the bystander adds to the phases it watches.
var influenceFlag = &cli.BoolFlag{Name: "bystander-influence", Usage: "also run every cycle with the bystander paused, interleaved, " +
	"and say what the prober adds to each phase (median ratio, 95% CI)"}

// bystanderOf reads --bystander (nil: none). iproute2's side would share
// the prober, so it is refused with --compare.
func bystanderOf(c *cli.Context, compare bool) (*bystander.Config, error) {
	if c.String("bystander") == "" {
		return nil, nil
	}
	if compare {
		return nil, usagef("--bystander and --compare: give one (the prober would measure both sides at once)")
	}
	b, err := bystander.Parse(c.String("bystander"))
	if err != nil {
		return nil, usage(err)
	}
	return &b, nil
}
