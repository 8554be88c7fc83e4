// Package swf reads and writes the Standard Workload Format of the Parallel
// Workloads Archive (Feitelson, Tsafrir, Krakov 2014, "Experience with
// using the Parallel Workloads Archive", JPDC 74(10);
// https://www.cs.huji.ac.il/labs/parallel/workload/swf.html): one job per
// line, 18 whitespace-separated fields, -1 for unknown, and header comment
// lines starting with ';'.
package swf

// Job is one SWF record. Times are in seconds; -1 means unknown in every
// field, as in the file.
type Job struct {
	ID          int64   // 1: job number
	Submit      int64   // 2: submit time, seconds from the log's start
	Wait        int64   // 3: wait time
	Run         int64   // 4: run time
	AllocProcs  int64   // 5: number of allocated processors
	AvgCPU      float64 // 6: average CPU time used per processor, seconds
	UsedMem     float64 // 7: used memory, KB per processor
	ReqProcs    int64   // 8: requested number of processors
	ReqTime     int64   // 9: requested time (user runtime estimate)
	ReqMem      float64 // 10: requested memory, KB per processor
	Status      int64   // 11: 1 completed, 0 failed, 5 cancelled (also 2, 3, 4 for checkpoint records)
	User        int64   // 12: user ID
	Group       int64   // 13: group ID
	Executable  int64   // 14: executable (application) number
	Queue       int64   // 15: queue number
	Partition   int64   // 16: partition number
	PrecedingID int64   // 17: preceding job number
	ThinkTime   int64   // 18: think time from the preceding job, seconds
}

// FieldNames are the SWF field names, index 0 for field 1, as used in
// error messages.
var FieldNames = [18]string{
	"job number", "submit time", "wait time", "run time", "allocated processors",
	"average CPU time", "used memory", "requested processors", "requested time",
	"requested memory", "status", "user ID", "group ID", "executable number",
	"queue number", "partition number", "preceding job number", "think time",
}

// Header is what the header comments of a log say. Fields the log does not
// give are 0 (MaxNodes, MaxProcs) or -1 (UnixStartTime).
type Header struct {
	MaxNodes      int64
	MaxProcs      int64
	UnixStartTime int64
	// Comments are all header lines as read, without the leading ';'.
	Comments []string
}
