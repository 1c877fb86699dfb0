/* SPDX-License-Identifier: MIT */
/*
 * The format texts (tracedat_formats.h), written out here in the layout
 * the kernel's event format files use: a tab before each field, "offset",
 * "size" and "signed" after it, a blank line between the common fields
 * and the event's own, then the print format. Field order is the order
 * the kernel declares them, which for funcgraph_exit is not offset order.
 */
#include "vmm/report/tracedat/tracedat_formats.h"

#define COMMON_FIELDS                                                                      \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"             \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"             \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"     \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"                         \
	"\n"

#define HEADER(name, id) "name: " name "\nID: " #id "\nformat:\n" COMMON_FIELDS

const char tracedat_header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n";

const char tracedat_header_event[] =
	"# compressed entry header\n"
	"\ttype_len    :    5 bits\n"
	"\ttime_delta  :   27 bits\n"
	"\tarray       :   32 bits\n"
	"\n"
	"\tpadding     : type == 29\n"
	"\ttime_extend : type == 30\n"
	"\ttime_stamp : type == 31\n"
	"\tdata max type_len  == 28\n";

/* The IDs in the texts must be the enum's: checked by the unit tests. */
const struct tracedat_format tracedat_ftrace_formats[] = {
	{ "function", TRACEDAT_ID_FUNCTION,
	  HEADER("function", 1) "\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n"
				"\tfield:unsigned long parent_ip;\toffset:16;\tsize:8;\tsigned:0;\n"
				"\n"
				"print fmt: \" %ps <-- %ps\", (void *)REC->ip, (void *)REC->parent_ip\n" },
	{ "print", TRACEDAT_ID_PRINT,
	  HEADER("print", 5) "\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n"
			     "\tfield:char buf[];\toffset:16;\tsize:0;\tsigned:1;\n"
			     "\n"
			     "print fmt: \"%ps: %s\", (void *)REC->ip, REC->buf\n" },
	{ "bprint", TRACEDAT_ID_BPRINT,
	  HEADER("bprint", 6) "\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n"
			      "\tfield:const char * fmt;\toffset:16;\tsize:8;\tsigned:0;\n"
			      "\tfield:u32 buf[];\toffset:24;\tsize:0;\tsigned:0;\n"
			      "\n"
			      "print fmt: \"%ps: %s\", (void *)REC->ip, REC->fmt\n" },
	{ "funcgraph_exit", TRACEDAT_ID_FUNCGRAPH_EXIT,
	  HEADER("funcgraph_exit", 10) "\tfield:unsigned long func;\toffset:8;\tsize:8;\tsigned:0;\n"
				       "\tfield:unsigned int overrun;\toffset:20;\tsize:4;\tsigned:0;\n"
				       "\tfield:unsigned long long calltime;\toffset:24;\tsize:8;\tsigned:0;\n"
				       "\tfield:unsigned long long rettime;\toffset:32;\tsize:8;\tsigned:0;\n"
				       "\tfield:int depth;\toffset:16;\tsize:4;\tsigned:1;\n"
				       "\n"
				       "print fmt: \"<-- %ps (%d) (start: %llx  end: %llx) over: %d\", "
				       "(void *)REC->func, REC->depth, REC->calltime, REC->rettime, "
				       "REC->depth\n" },
	{ "funcgraph_entry", TRACEDAT_ID_FUNCGRAPH_ENTRY,
	  HEADER("funcgraph_entry", 11) "\tfield:unsigned long func;\toffset:8;\tsize:8;\tsigned:0;\n"
					"\tfield:int depth;\toffset:16;\tsize:4;\tsigned:1;\n"
					"\n"
					"print fmt: \"--> %ps (%d)\", (void *)REC->func, REC->depth\n" },
};
const size_t tracedat_nr_ftrace_formats =
	sizeof(tracedat_ftrace_formats) / sizeof(tracedat_ftrace_formats[0]);

/* Strings are __data_loc fields, as TRACE_EVENT's __string() makes them;
 * the print formats read like earlytrace's own ftrace text. */
const struct tracedat_format tracedat_earlytrace_formats[] = {
	{ "run", TRACEDAT_ID_RUN,
	  HEADER("run", 32000) "\tfield:u64 tsc_khz;\toffset:8;\tsize:8;\tsigned:0;\n"
			       "\tfield:u64 start_time;\toffset:16;\tsize:8;\tsigned:0;\n"
			       "\tfield:__data_loc char[] version;\toffset:24;\tsize:4;\tsigned:1;\n"
			       "\tfield:__data_loc char[] kernel;\toffset:28;\tsize:4;\tsigned:1;\n"
			       "\tfield:__data_loc char[] build_id;\toffset:32;\tsize:4;\tsigned:1;\n"
			       "\tfield:__data_loc char[] mode;\toffset:36;\tsize:4;\tsigned:1;\n"
			       "\tfield:__data_loc char[] symbols;\toffset:40;\tsize:4;\tsigned:1;\n"
			       "\n"
			       "print fmt: \"earlytrace %s: kernel %s (build-id %s), mode %s, symbols: "
			       "%s, guest TSC %llu kHz\", __get_str(version), __get_str(kernel), "
			       "__get_str(build_id), __get_str(mode), __get_str(symbols), "
			       "REC->tsc_khz\n" },
	{ "vm_exit", TRACEDAT_ID_VM_EXIT,
	  HEADER("vm_exit", 32001) "\tfield:unsigned long rip;\toffset:8;\tsize:8;\tsigned:0;\n"
				   "\tfield:u64 addr;\toffset:16;\tsize:8;\tsigned:0;\n"
				   "\tfield:u64 value;\toffset:24;\tsize:8;\tsigned:0;\n"
				   "\tfield:__data_loc char[] desc;\toffset:32;\tsize:4;\tsigned:1;\n"
				   "\tfield:u8 kind;\toffset:36;\tsize:1;\tsigned:0;\n"
				   "\tfield:u8 size;\toffset:37;\tsize:1;\tsigned:0;\n"
				   "\tfield:u8 write;\toffset:38;\tsize:1;\tsigned:0;\n"
				   "\tfield:u8 unclaimed;\toffset:39;\tsize:1;\tsigned:0;\n"
				   "\n"
				   "print fmt: \"%s in %pS\", __get_str(desc), (void *)REC->rip\n" },
	{ "mark", TRACEDAT_ID_MARK,
	  HEADER("mark", 32002) "\tfield:__data_loc char[] text;\toffset:8;\tsize:4;\tsigned:1;\n"
				"\n"
				"print fmt: \"%s\", __get_str(text)\n" },
	{ "drops", TRACEDAT_ID_DROPS,
	  HEADER("drops", 32003) "\tfield:u64 count;\toffset:8;\tsize:8;\tsigned:0;\n"
				 "\tfield:u64 total;\toffset:16;\tsize:8;\tsigned:0;\n"
				 "\tfield:__data_loc char[] reason;\toffset:24;\tsize:4;\tsigned:1;\n"
				 "\n"
				 "print fmt: \"%llu events dropped (%s), %llu in total\", REC->count, "
				 "__get_str(reason), REC->total\n" },
	{ "end", TRACEDAT_ID_END,
	  HEADER("end", 32004) "\tfield:u64 recorded;\toffset:8;\tsize:8;\tsigned:0;\n"
			       "\tfield:u64 written;\toffset:16;\tsize:8;\tsigned:0;\n"
			       "\tfield:u64 dropped;\toffset:24;\tsize:8;\tsigned:0;\n"
			       "\tfield:u64 lost;\toffset:32;\tsize:8;\tsigned:0;\n"
			       "\tfield:u32 finished;\toffset:40;\tsize:4;\tsigned:0;\n"
			       "\tfield:__data_loc char[] reason;\toffset:44;\tsize:4;\tsigned:1;\n"
			       "\n"
			       "print fmt: \"%s; events recorded %llu, written %llu, dropped %llu, "
			       "not written %llu\", __get_str(reason), REC->recorded, REC->written, "
			       "REC->dropped, REC->lost\n" },
};
const size_t tracedat_nr_earlytrace_formats =
	sizeof(tracedat_earlytrace_formats) / sizeof(tracedat_earlytrace_formats[0]);
