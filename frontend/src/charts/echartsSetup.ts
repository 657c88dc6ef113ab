/**
 * Apache ECharts, only the pieces the charts panel draws (bar, pie, line, map; canvas renderer).
 * Imported lazily, so pages that never open a chart never load it; the world map is `worldMap.ts`.
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

echarts.use([BarChart, LineChart, PieChart, MapChart, AriaComponent, GridComponent, LegendComponent, TooltipComponent,
  VisualMapComponent, CanvasRenderer]);

export { echarts };
