package slurmconf

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/xce-sched/xce/cluster"
	"github.com/xce-sched/xce/slurm"
)

// Settings are the cluster-wide parameters of slurm.conf that xce uses.
type Settings struct {
	// Policy and Picker are every queue's: backfill (sched/backfill,
	// Slurm's default) or fcfs (sched/builtin); multifactor
	// (priority/multifactor) or priority (priority/basic, the default:
	// submit order).
	Policy, Picker string
	// Priority is the multifactor configuration (Slurm's defaults for
	// what is not given).
	Priority cluster.Multifactor
	// FirstJobID is FirstJobId (0 when not given).
	FirstJobID int64
	// ClusterName is ClusterName ("" when not given).
	ClusterName string
	// MaxJobTest is every queue's max_job_test: bf_max_job_test of
	// SchedulerParameters under sched/backfill, Slurm's default 500 when
	// not given (slurm.conf(5)); 0 under sched/builtin, which plans no
	// job ahead.
	MaxJobTest int
}

// Slurm's default and largest bf_max_job_test (slurm.conf(5);
// DEF_BF_MAX_JOB_TEST and MAX_BF_MAX_JOB_TEST in its backfill plugin).
const (
	slurmMaxJobTest    = 500
	slurmMaxJobTestMax = 1_000_000
)

// usedKeys are the cluster-wide keys Settings reads, in lower case.
var usedKeys = []string{"schedulertype", "prioritytype", "priorityweightage", "priorityweightfairshare",
	"priorityweightjobsize", "priorityweightpartition", "priorityweightqos", "prioritymaxage",
	"prioritydecayhalflife", "prioritycalcperiod", "priorityfavorsmall", "priorityflags",
	"fairsharedampeningfactor", "firstjobid", "clustername", "selecttype", "selecttypeparameters",
	"grestypes", "enforcepartlimits", "priorityweightassoc", "priorityweighttres", "schedulerparameters"}

// daemonKeys are keys that configure Slurm's daemons, logging,
// accounting storage, security and job launch: they do not change which
// job starts when, and are listed apart in the warnings.
var daemonKeys = []string{"authtype", "authalttypes", "authinfo", "credtype", "cryptotype", "slurmuser", "slurmduser",
	"controlmachine", "controladdr", "slurmctldhost", "backupcontroller", "backupaddr", "returntoservice",
	"messagetimeout", "jobcredentialprivatekey", "jobcredentialpubliccertificate", "slurmdparameters",
	"proctracktype", "switchtype", "taskplugin", "taskpluginparam", "usepam", "slurmctldtimeout", "slurmdtimeout",
	"inactivelimit", "minjobage", "killwait", "waittime", "slurmschedlogfile", "slurmschedloglevel",
	"slurmctlddebug", "slurmddebug", "debugflags", "slurmctldlogfile", "slurmdlogfile", "slurmdspooldir",
	"statesavelocation", "jobcomptype", "jobcomploc", "jobcomphost", "jobcompport", "jobcompuser", "jobcomppass",
	"jobacctgathertype", "jobacctgatherfrequency", "jobacctgatherparams", "accountingstoragetype",
	"accountingstoragehost", "accountingstorageport", "accountingstorageuser", "accountingstoragepass",
	"accountingstorageloc", "accountingstoreflags", "accountingstorejobcomment", "accountingstorageenforce",
	"propagateresourcelimits", "propagateresourcelimitsexcept", "vsizefactor", "killonbadexit", "slurmctldport",
	"slurmdport", "slurmctldpidfile", "slurmdpidfile", "mpidefault", "mpiparams", "plugindir", "plugstackconfig",
	"epilog", "prolog", "epilogslurmctld", "prologslurmctld", "prologflags", "mailprog", "tmpfs", "launchtype",
	"communicationparameters", "jobrequeue", "healthcheckprogram", "healthcheckinterval", "healthchecknodestate",
	"slurmdlogfile", "slurmdsyslogdebug", "slurmctldsyslogdebug", "logtimeformat", "dbdhost", "dbdport",
	"acctgatherenergytype", "acctgathernodefreq", "acctgatherinterconnecttype", "acctgatherfilesystemtype",
	"acctgatherprofiletype", "jobcheckpointdir", "checkpointtype", "cachegroups", "srunportrange", "unkillablesteptimeout",
	"fastschedule", "maxjobcount", "maxstepcount", "tcptimeout", "batchstarttimeout",
	"completewait", "getenvtimeout", "resvoverrun", "keepalivetime", "sluid", "jobcontainertype", "cgroupmountpoint"}

// Settings reads the cluster-wide parameters; reported receives a note
// for each parameter read only in part (a PriorityFlags flag xce does not
// model, a select plugin it approximates).
func (c *Config) Settings(reported func(file string, line int, msg string)) (Settings, error) {
	s := Settings{Policy: "backfill", Picker: "priority", Priority: cluster.DefaultMultifactor()}
	get := func(k string) (Param, bool) {
		p, ok := c.Params[strings.ToLower(k)]
		return p, ok
	}
	bad := func(p Param, format string, args ...any) error {
		return slurm.Errorf(c.File, p.Line, "%s=%s: %s", p.Key, slurm.Quote(p.Val), fmt.Sprintf(format, args...))
	}
	if p, ok := get("SchedulerType"); ok {
		switch strings.ToLower(p.Val) {
		case "sched/backfill":
		case "sched/builtin":
			s.Policy = "fcfs"
		default:
			return s, bad(p, "want sched/backfill or sched/builtin")
		}
	}
	if s.Policy == "backfill" {
		s.MaxJobTest = slurmMaxJobTest
	}
	if p, ok := get("SchedulerParameters"); ok {
		var other []string
		seen := false
		for _, opt := range strings.Split(p.Val, ",") {
			name, val, _ := strings.Cut(strings.TrimSpace(opt), "=")
			switch name = strings.ToLower(name); name {
			case "":
			case "bf_max_job_test":
				v, err := strconv.Atoi(val)
				if err != nil || v < 1 || v > slurmMaxJobTestMax {
					return s, bad(p, "bf_max_job_test: want an integer from 1 to %d, got %s", slurmMaxJobTestMax, slurm.Quote(val))
				}
				switch {
				case seen:
					reported(c.File, p.Line, "SchedulerParameters: bf_max_job_test="+val+" again: Slurm reads the first")
				case s.Policy != "backfill":
					reported(c.File, p.Line, "SchedulerParameters: bf_max_job_test: ignored, sched/builtin plans no job ahead")
				default:
					s.MaxJobTest = v
				}
				seen = true
			default:
				other = append(other, name)
			}
		}
		if len(other) > 0 {
			reported(c.File, p.Line, "SchedulerParameters: "+strings.Join(other, ", ")+": not modelled by xce; they may change Slurm's schedule")
		}
	}
	if p, ok := get("PriorityType"); ok {
		switch strings.ToLower(p.Val) {
		case "priority/multifactor":
			s.Picker = "multifactor"
		case "priority/basic":
		default:
			return s, bad(p, "want priority/multifactor or priority/basic")
		}
	}
	m := &s.Priority
	for _, w := range []struct {
		key string
		to  *int64
	}{{"PriorityWeightAge", &m.WeightAge}, {"PriorityWeightFairshare", &m.WeightFairshare},
		{"PriorityWeightJobSize", &m.WeightJobSize}, {"PriorityWeightPartition", &m.WeightPartition},
		{"PriorityWeightQOS", &m.WeightQOS}} {
		if p, ok := get(w.key); ok {
			v, err := strconv.ParseInt(p.Val, 10, 64)
			if err != nil || v < 0 || v > 1<<32-1 {
				return s, bad(p, "want an integer from 0 to 4294967295")
			}
			*w.to = v
		}
	}
	if p, ok := get("PriorityWeightAssoc"); ok && p.Val != "0" {
		reported(c.File, p.Line, "PriorityWeightAssoc: the association factor is not modelled (xce's associations have no priority)")
	}
	if p, ok := get("PriorityWeightTRES"); ok && p.Val != "" {
		reported(c.File, p.Line, "PriorityWeightTRES: TRES factors are not modelled")
	}
	for _, t := range []struct {
		key string
		to  *int64
		lo  int64
	}{{"PriorityMaxAge", &m.MaxAge, 1}, {"PriorityDecayHalfLife", &m.DecayHalfLife, 0}, {"PriorityCalcPeriod", &m.CalcPeriod, 0}} {
		if p, ok := get(t.key); ok {
			d, err := slurm.Duration(p.Val)
			if err != nil {
				return s, slurm.Errorf(c.File, p.Line, "%s: %w", p.Key, err)
			}
			if d < t.lo {
				return s, bad(p, "want a time of at least %d s", t.lo)
			}
			*t.to = d
		}
	}
	if p, ok := get("PriorityFavorSmall"); ok {
		b, err := yesNo(p.Val)
		if err != nil {
			return s, bad(p, "want YES or NO")
		}
		m.FavorSmall = b
	}
	if p, ok := get("FairShareDampeningFactor"); ok {
		v, err := strconv.ParseInt(p.Val, 10, 64)
		if err != nil || v < 1 || v > 65535 {
			return s, bad(p, "want an integer from 1 to 65535")
		}
		m.DampeningFactor = v
	}
	if p, ok := get("PriorityFlags"); ok {
		for _, f := range strings.Split(p.Val, ",") {
			switch strings.ToUpper(strings.TrimSpace(f)) {
			case "":
			case "SMALL_RELATIVE_TO_TIME":
				m.SmallRelativeToTime = true
			case "NO_FAIR_TREE":
				m.Classic = true
			case "DEPTH_OBLIVIOUS":
				m.Classic = true
				reported(c.File, p.Line, "PriorityFlags=DEPTH_OBLIVIOUS: xce uses the classic fair-share formula (NO_FAIR_TREE) instead")
			default:
				reported(c.File, p.Line, "PriorityFlags="+f+": not modelled")
			}
		}
	}
	if p, ok := get("FirstJobId"); ok {
		v, err := strconv.ParseInt(p.Val, 10, 64)
		if err != nil || v < 1 {
			return s, bad(p, "want a positive integer")
		}
		s.FirstJobID = v
	}
	if p, ok := get("ClusterName"); ok {
		s.ClusterName = p.Val
	}
	if p, ok := get("SelectType"); ok {
		switch strings.ToLower(p.Val) {
		case "select/cons_tres", "select/cons_res":
		case "select/linear":
			reported(c.File, p.Line, "SelectType=select/linear allocates whole nodes; xce allocates CPUs (as select/cons_tres)")
		default:
			reported(c.File, p.Line, "SelectType="+p.Val+": xce allocates CPUs, memory and GPUs as select/cons_tres does")
		}
	}
	if p, ok := get("SelectTypeParameters"); !ok || !strings.Contains(strings.ToLower(p.Val), "memory") {
		line := 0
		if ok {
			line = p.Line
		}
		reported(c.File, line, "SelectTypeParameters has no CR_*_Memory: Slurm does not count memory as consumable; xce reserves the jobs' memory anyway")
	}
	if p, ok := get("GresTypes"); ok {
		for _, g := range strings.Split(p.Val, ",") {
			if g = strings.TrimSpace(g); g != "" && g != "gpu" {
				reported(c.File, p.Line, "GresTypes: "+g+" is not modelled (only gpu is)")
			}
		}
	}
	return s, nil
}
