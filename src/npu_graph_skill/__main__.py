from npu_graph_skill.cli import main

raise SystemExit(main())
