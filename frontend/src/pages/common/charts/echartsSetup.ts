/**
 * Apache ECharts, only the pieces the charts panel draws (bar, pie, line, map; canvas renderer), and
 * the world map from `world-atlas` (Natural Earth, public domain; bundled, never fetched at runtime:
 * the CSP is default-src 'self'). Imported lazily, so pages that never open a chart never load it.
 */
import { BarChart, LineChart, MapChart, PieChart } from "echarts/charts";
import {
  AriaComponent,
  GridComponent,
  LegendComponent,
  TooltipComponent,
  VisualMapComponent,
} from "echarts/components";
import * as echarts from "echarts/core";
import { CanvasRenderer } from "echarts/renderers";
import { feature } from "topojson-client";
import type { GeometryCollection, Topology } from "topojson-specification";
import world from "world-atlas/countries-110m.json";

echarts.use([BarChart, LineChart, PieChart, MapChart, AriaComponent, GridComponent, LegendComponent, TooltipComponent,
  VisualMapComponent, CanvasRenderer]);

const topology = world as unknown as Topology<{ countries: GeometryCollection<{ name: string }> }>;
echarts.registerMap("world", feature(topology, topology.objects.countries) as never);

export { echarts };
