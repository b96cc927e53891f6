package kprofile

import (
	"fmt"
	"strings"
	"testing"
)

// A function_graph trace as the kernel writes it with funcgraph-proc and
// funcgraph-tail: two tasks interleaved on two CPUs, one of them migrating
// mid-call, overhead marks, a duration the kernel shortened, a
// context-switch banner, a comment, and a return whose entry came before
// the trace started.
const graphFixture = `# tracer: function_graph
#
# CPU  TASK/PID         DURATION                  FUNCTION CALLS
# |     |    |           |   |                     |   |   |   |
 0)  devbulk-123   |               |  unregister_netdevice_many_notify() {
 0)  devbulk-123   |               |    dev_close_many() {
 0)  devbulk-123   |   8.500 us    |      synchronize_rcu_expedited();
 0)  devbulk-123   | + 10.000 us   |    } /* dev_close_many */
 1)  kworke-45     |               |  cleanup_net() {
 1)  kworke-45     | ! 250.125 us  |    rcu_barrier();
 ------------------------------------------
 1)  kworke-45    =>  devbulk-123  
 ------------------------------------------
 1)  devbulk-123   |   2.000 us    |    netdev_unregister_kobject();
 1)  devbulk-123   | # 2012.5 us   |  } /* unregister_netdevice_many_notify */
 0)  kworke-45     | @ 123456.78 us |  } /* cleanup_net */
 0)  devbulk-123   |               |  /* a trace_printk */
 1)  devbulk-123   | $ 1234567 us  |  } /* netdev_run_todo */
`

// A task that migrated between two calls of one function: the kernel
// prints the first call's entry as a leaf with the second call's return
// (found on the entry's CPU), then the first's return on the other CPU,
// then the second's entry, never closed. Both calls count, each once.
const migrated = ` 0)    init-98     |               |  unregister_netdevice_many_notify() {
 0)    init-98     |               |    synchronize_net() {
 0)    init-98     | ! 283.105 us  |      synchronize_rcu_expedited();
 1)    init-98     | ! 198.159 us  |      } /* synchronize_rcu_expedited */
 1)    init-98     | ! 216.416 us  |    } /* synchronize_net */
 1)    init-98     |               |    synchronize_rcu_expedited() {
 0)    init-98     | # 1000.000 us |  } /* unregister_netdevice_many_notify */
`

func TestGraphTotalsAcrossMigration(t *testing.T) {
	calls, outer, unmatched, err := graphTotals(strings.NewReader(migrated))
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(calls)
	want := "[{synchronize_rcu_expedited (unregister_netdevice_many_notify) 2 481264 481264} {synchronize_net (unregister_netdevice_many_notify) 1 216416 0} {unregister_netdevice_many_notify 1 1000000 783584}]"
	if got != want || outer != 1000000 || unmatched != 0 {
		t.Errorf("totals %s, outermost %d, unmatched %d\nwant %s", got, outer, unmatched, want)
	}
}

func TestGraphTotals(t *testing.T) {
	calls, outer, unmatched, err := graphTotals(strings.NewReader(graphFixture))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range calls {
		got[c.Function] = fmt.Sprintf("%d %d %d", c.Calls, c.InclusiveNS, c.SelfNS)
	}
	want := map[string]string{
		"synchronize_rcu_expedited (dev_close_many)": "1 8500 8500",
		"dev_close_many":                   "1 10000 1500",
		"netdev_unregister_kobject":        "1 2000 2000",
		"unregister_netdevice_many_notify": "1 2012500 2000500", // less its two traced callees
		"rcu_barrier (cleanup_net)":        "1 250125 250125",
		"cleanup_net":                      "1 123456780 123206655",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("totals\n got %v\nwant %v", got, want)
	}
	if outer != 2012500+123456780 || unmatched != 1 {
		t.Errorf("outermost %d ns, %d unmatched returns; want %d and 1 (netdev_run_todo)", outer, unmatched, 2012500+123456780)
	}
}

// A trace in another format (options changed behind devbulk's back) is an
// error, not an empty profile.
func TestGraphTotalsRefusesAnUnknownFormat(t *testing.T) {
	odd := " 0)   devbulk-123   |  unregister_netdevice_many_notify() {\n 0)   devbulk-123   |  } /* unregister_netdevice_many_notify */ = 0x0\n"
	if _, _, _, err := graphTotals(strings.NewReader(odd)); err == nil {
		t.Error("a trace with no line devbulk reads gave a profile")
	}
}
