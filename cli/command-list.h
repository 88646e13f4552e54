/* X-macro list of subcommands: COMMAND(name, summary, usage). Sorted by name. */
COMMAND(dna, N_("Compare the DNA of two models: similarity per layer and logic shifts"), N_("loom dna A B [--threshold T] [--json]"))
COMMAND(dtype, N_("List the numeric types and convert values to their codes"), N_("loom dtype list | loom dtype convert --dtype NAME [--scale S]"))
COMMAND(eval, N_("Evaluate a model on the held-out part of a data set"), N_("loom eval MODEL --data NAME|FILE.csv [--loss NAME] [--regression] [--seed S] [--threads N] [--json]"))
COMMAND(forward, N_("Run a model on the samples of a .npy file and write the outputs"), N_("loom forward MODEL --input X.npy --output Y.npy [--threads N]"))
COMMAND(info, N_("Describe a model: grid, layers, links, sizes and shape problems"), N_("loom info MODEL"))
COMMAND(new, N_("Create a model file: an empty grid or a built-in example"), N_("loom new --grid D,R,C,L [--out MODEL] [--input-shape N[,N...]] [--force] | loom new --example NAME [--out MODEL] [--force] | loom new --list"))
COMMAND(train, N_("Train a model on a data set and print a line per epoch"), N_("loom train MODEL [--config FILE] [--data NAME|FILE.csv] [--epochs N] [--batch B] [--optimizer NAME] [--lr X] [--schedule NAME[:key=value,...]] [--warmup N[:start=F]] [--momentum X] [--nesterov] [--weight-decay X] [--betas B1,B2] [--method backprop|tween] [--loss NAME] [--regression] [--seed S] [--threads N] [--out FILE] [--save-config FILE] [--json]"))
COMMAND(version, N_("Print the version of loom and of the engine"), N_("loom version"))
