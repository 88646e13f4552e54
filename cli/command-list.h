/* X-macro list of subcommands: COMMAND(name, summary, usage). Sorted by name. */
COMMAND(dtype, N_("List the numeric types and convert values to their codes"), N_("loom dtype list | loom dtype convert --dtype NAME [--scale S]"))
COMMAND(forward, N_("Run a model on the samples of a .npy file and write the outputs"), N_("loom forward MODEL --input X.npy --output Y.npy [--threads N]"))
COMMAND(info, N_("Describe a model: grid, layers, links, sizes and shape problems"), N_("loom info MODEL"))
COMMAND(new, N_("Create a model file: an empty grid or a built-in example"), N_("loom new --grid D,R,C,L --out MODEL [--input-shape N[,N...]] | loom new --example NAME --out MODEL | loom new --list"))
COMMAND(version, N_("Print the version of loom and of the engine"), N_("loom version"))
